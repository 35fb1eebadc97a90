"""BFCL v4 single-turn categories as env tasks, read from the installed `bfcl-eval` package (not vendored).

The data files are located through `importlib.metadata` without importing `bfcl_eval` (its import pulls many
optional dependencies). Checking follows BFCL's AST rules, reimplemented here: the function name must match, required
parameters present, no parameter outside the schema or the possible answer, types as declared (int accepted for
float, tuples as lists, a value of the possible answers' own type accepted as a "variable"), strings compared after
BFCL's normalisation (spaces and `,./-_*^` removed, lower case, ' -> "), optional parameters omitted only where the
possible answers allow "" and parallel calls matched in any order. Irrelevance: correct iff no call is made;
live_relevance: correct iff at least one call is made.
"""

from __future__ import annotations

import functools
import importlib.metadata
import json
import re
from pathlib import Path
from typing import Any

from rlvr_gym import Task, ToolCall, Verdict
from rlvr_gym.tool_markup import format_tool_calls

from .parsing import call_arguments, parse_tool_calls

CATEGORY_FILES: dict[str, str] = {
    "simple": "simple_python",
    "multiple": "multiple",
    "parallel": "parallel",
    "parallel_multiple": "parallel_multiple",
    "live_simple": "live_simple",
    "live_multiple": "live_multiple",
    "live_parallel": "live_parallel",
    "live_parallel_multiple": "live_parallel_multiple",
    "irrelevance": "irrelevance",
    "live_irrelevance": "live_irrelevance",
    "live_relevance": "live_relevance",
}
NO_CALL_CATEGORIES = frozenset({"irrelevance", "live_irrelevance"})
ANY_CALL_CATEGORIES = frozenset({"live_relevance"})
_PY_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "float": (float,),
    "boolean": (bool,),
    "array": (list,),
    "tuple": (list,),
    "dict": (dict,),
    "any": (object,),
}
_STRIP = re.compile(r"[ ,./\-_*^]")
_JSON_TYPES = {"dict": "object", "float": "number", "tuple": "array", "any": None}


class BFCLDataMissing(RuntimeError):
    """The bfcl-eval package (or its data folder) is not installed."""


@functools.lru_cache(maxsize=1)
def data_dir() -> Path:
    try:
        dist = importlib.metadata.distribution("bfcl-eval")
    except importlib.metadata.PackageNotFoundError as exc:
        raise BFCLDataMissing("install the data with `pip install --no-deps bfcl-eval`") from exc
    path = Path(str(dist.locate_file("bfcl_eval/data")))
    if not path.is_dir():
        raise BFCLDataMissing(f"bfcl-eval is installed but {path} is missing")
    return path


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@functools.lru_cache(maxsize=16)
def load_category(category: str) -> tuple[dict[str, Any], ...]:
    """Items of one category, each with `question`, `function` and (where BFCL has one) `ground_truth`."""
    if category not in CATEGORY_FILES:
        raise ValueError(f"unknown BFCL category {category!r}; choose from {sorted(CATEGORY_FILES)}")
    stem = f"BFCL_v4_{CATEGORY_FILES[category]}.json"
    items = _read_jsonl(data_dir() / stem)
    answer_path = data_dir() / "possible_answer" / stem
    if answer_path.exists():
        answers = {row["id"]: row["ground_truth"] for row in _read_jsonl(answer_path)}
        for item in items:
            item["ground_truth"] = answers.get(item["id"])
    return tuple(items)


# ---- schema conversion for the prompt ---------------------------------------------------------------------------


def to_json_schema(node: Any) -> Any:
    """BFCL's Python-flavoured types (dict/float/tuple/any) -> JSON schema, recursively."""
    if isinstance(node, list):
        return [to_json_schema(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: to_json_schema(v) for k, v in node.items() if k != "type"}
    if "type" in node:
        mapped = _JSON_TYPES.get(node["type"], node["type"]) if isinstance(node["type"], str) else node["type"]
        if mapped is not None:
            out["type"] = mapped
    return out


def openai_tools(functions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": to_json_schema(fn)} for fn in functions]


# ---- AST checking -------------------------------------------------------------------------------------------------


def standardize(text: str) -> str:
    return _STRIP.sub("", text).lower().replace("'", '"')


def _std(value: Any) -> Any:
    return standardize(value) if isinstance(value, str) else value


def _is_type(value: Any, type_name: str) -> bool:
    if type_name == "any":
        return True
    if type_name == "boolean":
        return isinstance(value, bool)
    return not isinstance(value, bool) and isinstance(value, _PY_TYPES.get(type_name, (object,)))


def _answer_type(options: list[Any]) -> type | None:
    for option in options:
        if option != "":
            return type(option)
    return None


def _dict_ok(value: dict[str, Any], options: list[Any]) -> bool:
    for option in options:
        if not isinstance(option, dict):
            continue
        if any(k not in option or _std(v) not in [_std(o) for o in option[k]] for k, v in value.items()):
            continue
        if any(k not in value and "" not in allowed for k, allowed in option.items()):
            continue
        return True
    return False


def _list_dict_ok(value: list[Any], options: list[Any]) -> bool:
    return any(
        isinstance(option, list)
        and len(option) == len(value)
        and all(isinstance(v, dict) and _dict_ok(v, [o]) for v, o in zip(value, option, strict=True))
        for option in options
    )


def check_param(name: str, value: Any, spec: dict[str, Any], options: list[Any]) -> str | None:
    """None when `value` is acceptable for parameter `name`, else the reason."""
    declared = spec.get("type", "any")
    if declared == "float" and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    answer_type = _answer_type(options)
    variable = False
    if not _is_type(value, declared):
        if answer_type is not None and type(value) is answer_type and answer_type not in _PY_TYPES.get(declared, ()):
            variable = True  # BFCL: a value of the possible answers' own type stands for a variable
        else:
            return f"{name}: expected {declared}, got {type(value).__name__}"
    elif declared in ("array", "tuple") and isinstance(spec.get("items"), dict):
        inner = spec["items"].get("type", "any")
        answer_item_types = {type(x) for o in options if isinstance(o, list) for x in o}
        if not all(_is_type(v, inner) or type(v) in answer_item_types for v in value):
            return f"{name}: items should be {inner}"
    if variable:
        return None if _std(value) in [_std(o) for o in options] else f"{name}: {value!r} not allowed"
    if declared == "dict":
        return None if _dict_ok(value, options) else f"{name}: dict {value!r} not among the possible answers"
    if declared in ("array", "tuple") and (spec.get("items") or {}).get("type") == "dict":
        return None if _list_dict_ok(value, options) else f"{name}: list of dicts not among the possible answers"
    if isinstance(value, str):
        return (
            None
            if standardize(value) in [standardize(o) for o in options if isinstance(o, str)]
            else f"{name}: {value!r} not among {options}"
        )
    if isinstance(value, list):
        allowed = [[_std(x) for x in o] for o in options if isinstance(o, list)]
        return None if [_std(x) for x in value] in allowed else f"{name}: {value!r} not among {options}"
    ok = any(value == o and isinstance(value, bool) == isinstance(o, bool) for o in options)
    return None if ok else f"{name}: {value!r} not among {options}"


def check_one(function: dict[str, Any], name: str, args: dict[str, Any], answer: dict[str, Any]) -> str | None:
    """One model call vs one possible answer `{func_name: {param: [options]}}` (BFCL's simple checker)."""
    expected_name, params = next(iter(answer.items()))
    if name != expected_name:
        return f"function {name!r} is not {expected_name!r}"
    schema = function.get("parameters") or {}
    properties = schema.get("properties") or {}
    for required in schema.get("required") or []:
        if required not in args:
            return f"missing required parameter {required!r}"
    for key, value in args.items():
        if key not in properties or key not in params:
            return f"unexpected parameter {key!r}"
        reason = check_param(key, value, properties[key], params[key])
        if reason:
            return reason
    for key, options in params.items():
        if key not in args and "" not in options:
            return f"parameter {key!r} is not optional"
    return None


def check_calls(item: dict[str, Any], calls: list[tuple[str, dict[str, Any]]], category: str) -> str | None:
    """None when the calls are correct for the item, else why not."""
    if category in NO_CALL_CATEGORIES:
        return None if not calls else f"expected no call, got {len(calls)}"
    if category in ANY_CALL_CATEGORIES:
        return None if calls else "expected at least one call"
    answers = item.get("ground_truth") or []
    if len(calls) != len(answers):
        return f"expected {len(answers)} call(s), got {len(calls)}"
    functions = {f["name"]: f for f in item.get("function", [])}
    unused = list(range(len(calls)))
    for answer in answers:
        expected_name = next(iter(answer))
        function = functions.get(expected_name)
        if function is None:
            return f"no function description for {expected_name!r}"
        reasons = []
        for i in unused:
            reason = check_one(function, calls[i][0], calls[i][1], answer)
            if reason is None:
                unused.remove(i)
                break
            reasons.append(reason)
        else:
            return f"no call matches {expected_name}: {reasons[0] if reasons else 'no calls left'}"
    return None


# ---- ground truth as calls --------------------------------------------------------------------------------------


def _first(options: list[Any]) -> tuple[bool, Any]:
    for option in options:
        if option == "":
            continue
        if isinstance(option, dict):
            return True, _pick_dict(option)
        if isinstance(option, list) and option and all(isinstance(o, dict) for o in option):
            return True, [_pick_dict(o) for o in option]
        return True, option
    return False, None


def _pick_dict(option: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, values in option.items():
        has, value = _first(values) if isinstance(values, list) else (True, values)
        if has:
            out[key] = value
    return out


def reference_calls(item: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The first possible answer of each expected call, as (name, arguments); an answer parameter the schema does not
    declare is left out where the answer allows omitting it."""
    functions = {f.get("name"): f for f in item.get("function") or []}
    calls = []
    for answer in item.get("ground_truth") or []:
        name, params = next(iter(answer.items()))
        declared = ((functions.get(name) or {}).get("parameters") or {}).get("properties") or {}
        kept = {k: v for k, v in params.items() if k in declared or "" not in v}
        calls.append((name, _pick_dict(kept)))
    return calls


# ---- reference actions and scoring ------------------------------------------------------------------------------

INSTRUCTIONS = (
    "Call the function(s) needed for the request. Write every call as its own block; for several calls "
    "write several blocks. If none of the functions fits the request, reply in plain text without any "
    "tool call."
)
NO_CALL_TEXT = "None of the available functions can be used for this request."
DIFFICULTY: dict[str, int] = {
    "simple": 1,
    "irrelevance": 2,
    "multiple": 2,
    "live_simple": 2,
    "live_irrelevance": 2,
    "live_relevance": 2,
    "parallel": 3,
    "live_multiple": 3,
    "parallel_multiple": 4,
    "live_parallel": 4,
    "live_parallel_multiple": 5,
}


def hermes(calls: list[tuple[str, dict[str, Any]]]) -> str:
    return format_tool_calls([ToolCall(name=n, arguments=json.dumps(a, ensure_ascii=False)) for n, a in calls])


def reference_action(item: dict[str, Any], category: str) -> str:
    """A correct action for the item: its first possible answer, no call, or any call (live_relevance)."""
    if category in NO_CALL_CATEGORIES:
        return NO_CALL_TEXT
    if category in ANY_CALL_CATEGORIES:
        fn = (item.get("function") or [{"name": "none", "parameters": {}}])[0]
        required = (fn.get("parameters") or {}).get("required") or []
        return hermes([(fn["name"], dict.fromkeys(required, "placeholder"))])
    return hermes(reference_calls(item))


def score_action(task: Task, action: str) -> Verdict:
    """BFCL's AST verdict of one action (pure; usable offline). A block that does not parse makes it invalid."""
    category = task.metadata.get("category", "simple")
    functions = (task.ground_truth or {}).get("function") or []
    parsed = parse_tool_calls(action)
    calls = [(c.name, call_arguments(c)) for c in parsed.calls]
    item = {"function": functions, "ground_truth": (task.ground_truth or {}).get("ground_truth")}
    reason = check_calls(item, calls, category)
    names = {f.get("name") for f in functions}
    correct = float(reason is None and parsed.syntax_ok)
    components = {
        "correct": correct,
        "format": float(parsed.syntax_ok),
        "tool_names": float(all(n in names for n, _ in calls)),
        "calls": float(len(calls)),
    }
    if not parsed.syntax_ok:
        error = "; ".join(e.describe() for e in parsed.errors[:3])
        return Verdict.invalid(error, components=components)
    return Verdict(reward=correct, passed=bool(correct), components=components, feedback=reason or "correct")
