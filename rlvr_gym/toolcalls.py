"""The project's one tool-call parser: assistant text -> tool calls, think text, content and structured errors.

Why it lives in the core: envs must parse actions but may not import agents, and the agents side needs the same
parser to build requests and check outputs. Formats understood, in priority order:

1. Hermes/Qwen tags `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` (several blocks, or a JSON list in one
   block), and TIER's chained `<tool_call return="one|all">{"0": {"API": {args}}, ...}</tool_call>`;
2. fenced blocks (```` ```json ````/```` ```tool_call ````) holding a call, a list of calls or `{"tool_calls": [...]}`;
3. bare JSON in OpenAI server shape (`{"tool_calls": [{"id", "function": {"name", "arguments": "<json>"}}]}`) or a
   bare Hermes object.

`<think>` sections are kept apart (calls written inside them are thoughts, not calls). Nothing here raises on any
input: broken JSON, unknown tools and schema violations come back as `ParseError`s with a kind, a message and a
character span, so an env can answer them. Work is linear in the input and capped (`MAX_CHARS`, `MAX_CALLS`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field

from .types import ToolCall

MAX_CHARS = 2_000_000
MAX_CALLS = 64
MAX_DEPTH = 32
MAX_ITEMS_CHECKED = 1000

#: A chained-call placeholder (TIER): the string value `API_RESPONSE_<id>` stands for the output of call `<id>`.
PLACEHOLDER = re.compile(r"API_RESPONSE_([A-Za-z0-9_\-]+)")

ParseErrorKind = Literal[
    "invalid_json",  # the block is not JSON
    "truncated",  # the JSON or the tag ends early (cut-off generation)
    "invalid_call",  # JSON, but not a call (no name, arguments not an object, ...)
    "unknown_tool",  # the name is not among the given tools
    "missing_argument",  # a required parameter is absent
    "unexpected_argument",  # a parameter the schema does not declare
    "wrong_type",  # a value of the wrong JSON type
    "invalid_value",  # right type, but outside the enum/const
    "too_many_calls",  # more than MAX_CALLS calls; the rest were ignored
    "input_too_large",  # text beyond MAX_CHARS was ignored
]
SYNTAX_KINDS = frozenset({"invalid_json", "truncated", "invalid_call", "too_many_calls", "input_too_large"})
PARAM_KINDS = frozenset({"missing_argument", "unexpected_argument"})
TYPE_KINDS = frozenset({"wrong_type", "invalid_value"})

_THINK_OPEN, _THINK_CLOSE = "<think>", "</think>"
_TAG_OPEN = re.compile(r"<tool_call(?P<attrs>\s[^<>]{0,200})?>")
_TAG_CLOSE = "</tool_call>"
_RETURN_ATTR = re.compile(r"""return\s*=\s*["']?(one|all)["']?""")
_NAME_START = re.compile(r"""\{\s*"(?:name|tool_calls|function)"\s*:""")
_CALL_FENCES = frozenset({"", "json", "tool_call", "tool_calls", "tool_code", "json5"})
_TYPE_ALIASES = {
    "dict": "object", "float": "number", "double": "number", "tuple": "array", "list": "array", "int": "integer",
    "str": "string", "bool": "boolean", "none": "null", "any": "any",
}
_decoder = json.JSONDecoder()


class ParseError(BaseModel):
    """One problem found while parsing or validating; `span` is (start, end) in the original text."""

    kind: ParseErrorKind
    message: str
    span: tuple[int, int] | None = None
    call_index: int | None = None
    tool: str | None = None
    field: str | None = None

    def describe(self) -> str:
        where = f" (call {self.call_index}{' ' + self.tool if self.tool else ''})" if self.call_index is not None else ""
        return f"{self.kind}{where}: {self.message}"


class ArgumentMismatch(BaseModel):
    """One argument/schema mismatch. `category` is what TIER counts: `param` (missing/unknown) or `type`."""

    kind: Literal["missing", "unexpected", "type", "value"]
    path: str
    expected: str = ""
    got: str = ""
    message: str = ""

    @property
    def category(self) -> Literal["param", "type"]:
        return "param" if self.kind in ("missing", "unexpected") else "type"

    @property
    def error_kind(self) -> ParseErrorKind:
        return {"missing": "missing_argument", "unexpected": "unexpected_argument", "type": "wrong_type",
                "value": "invalid_value"}[self.kind]  # type: ignore[return-value]


class ParsedOutput(BaseModel):
    """Everything `parse_tool_calls` found in one assistant message."""

    content: str = ""
    think: str = ""
    calls: list[ToolCall] = Field(default_factory=list)
    call_spans: list[tuple[int, int]] = Field(default_factory=list)
    errors: list[ParseError] = Field(default_factory=list)
    format: Literal["none", "hermes", "tier", "fenced", "openai", "json"] = "none"
    return_mode: Literal["one", "all"] | None = None

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def syntax_ok(self) -> bool:
        """True when every call block parsed (schema problems aside): TIER's format check."""
        return not any(e.kind in SYNTAX_KINDS for e in self.errors)

    def arguments(self, index: int) -> dict[str, Any]:
        """The decoded arguments of call `index` (always a dict for calls the parser produced)."""
        return call_arguments(self.calls[index])

    def errors_for(self, index: int) -> list[ParseError]:
        return [e for e in self.errors if e.call_index == index]

    def count(self, kinds: Iterable[str]) -> int:
        kinds = set(kinds)
        return sum(1 for e in self.errors if e.kind in kinds)


# ---- public helpers ----------------------------------------------------------------------------------------------


def call_arguments(call: ToolCall) -> dict[str, Any]:
    """Decode a call's raw `arguments` JSON; anything that is not an object gives {}."""
    try:
        value = json.loads(call.arguments) if call.arguments else {}
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def normalize_tools(tools: Any) -> dict[str, dict[str, Any]]:
    """Tool schemas in any common shape -> {name: OpenAI function dict with `parameters`}.

    Accepts a list of `{"type": "function", "function": {...}}`, a list of bare function dicts, or a mapping of
    name -> either of those (or name -> parameters schema).
    """
    if not tools:
        return {}
    items: list[tuple[str | None, Any]]
    if isinstance(tools, Mapping):
        items = list(tools.items())
    else:
        items = [(None, t) for t in tools]
    out: dict[str, dict[str, Any]] = {}
    for key, spec in items:
        if not isinstance(spec, Mapping):
            continue
        fn = spec.get("function") if isinstance(spec.get("function"), Mapping) else spec
        name = fn.get("name") or key
        if not isinstance(name, str):
            continue
        if "parameters" in fn or "name" in fn:
            params = fn.get("parameters") or {"type": "object", "properties": {}}
            out[name] = {**fn, "name": name, "parameters": params}
        else:  # a bare parameters schema keyed by name
            out[name] = {"name": name, "parameters": dict(fn)}
    return out


def validate_arguments(
    arguments: Mapping[str, Any] | str, schema: Mapping[str, Any], *, placeholder: re.Pattern[str] | None = PLACEHOLDER
) -> list[ArgumentMismatch]:
    """Check call arguments against a JSON schema (a function's `parameters`, or the function/tool dict itself).

    Returns one mismatch per missing required parameter, unknown parameter, wrongly typed value and value outside an
    enum, with a dotted path (`items[2].sku`). Strings matching `placeholder` (chained outputs) skip type checks.
    Type names from BFCL (`dict`, `float`, `tuple`, `any`) are read as their JSON-schema equivalents.
    """
    if isinstance(schema, Mapping) and isinstance(schema.get("function"), Mapping):
        schema = schema["function"]
    if isinstance(schema, Mapping) and "parameters" in schema and "properties" not in schema:
        schema = schema.get("parameters") or {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):
            return [ArgumentMismatch(kind="type", path="", expected="object", got="invalid JSON",
                                     message="arguments are not valid JSON")]
    out: list[ArgumentMismatch] = []
    root = dict(schema) if isinstance(schema, Mapping) else {}
    root.setdefault("type", "object")
    _check(arguments, root, "", out, placeholder, 0, top=True)
    return out


def format_tool_calls(
    calls: Iterable[ToolCall], *, style: Literal["hermes", "tier"] = "hermes", return_mode: str = "one"
) -> str:
    """Render calls as Hermes `<tool_call>` blocks (one per call) or as one TIER chained block.

    Both round-trip through `parse_tool_calls`, ids included: a Hermes block carries `"id"` when the call's id is
    not the parser's default `call_<position>` (so server-assigned ids survive and tool replies can name them).
    TIER keys are the call ids when set, else their positions.
    """
    calls = list(calls)
    if style == "tier":
        chain = {(c.id or str(i)): {c.name: _arguments_value(c)} for i, c in enumerate(calls)}
        return f'<tool_call return="{return_mode}">{json.dumps(chain, ensure_ascii=False)}</tool_call>'
    blocks = []
    for i, c in enumerate(calls):
        body: dict[str, Any] = {"name": c.name, "arguments": _arguments_value(c)}
        if c.id and c.id != f"call_{i}":
            body["id"] = c.id
        blocks.append("<tool_call>\n" + json.dumps(body, ensure_ascii=False) + "\n</tool_call>")
    return "\n".join(blocks)


def parse_tool_calls(text: str, tools: Any = None, *, max_calls: int = MAX_CALLS) -> ParsedOutput:
    """Parse one assistant message. Never raises; see the module docstring for the formats."""
    try:
        return _Parser(text if isinstance(text, str) else str(text), normalize_tools(tools), max_calls).run()
    except Exception as exc:  # a parser bug must not crash a rollout loop
        return ParsedOutput(
            content=text if isinstance(text, str) else "",
            errors=[ParseError(kind="invalid_json", message=f"internal parser error: {type(exc).__name__}: {exc}")],
        )


def check_calls(calls: list[ToolCall], tools: Any) -> list[ParseError]:
    """Validate already-structured calls (e.g. OpenAI server `tool_calls`) against tool schemas."""
    specs = normalize_tools(tools)
    errors: list[ParseError] = []
    for index, call in enumerate(calls):
        errors.extend(_call_errors(index, call, specs, None))
    return errors


# ---- implementation ----------------------------------------------------------------------------------------------


def _arguments_value(call: ToolCall) -> Any:
    try:
        return json.loads(call.arguments) if call.arguments else {}
    except (ValueError, RecursionError):
        return call.arguments


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _type_ok(value: Any, type_name: str) -> bool:
    actual = _json_type(value)
    if type_name in ("any", ""):
        return True
    if type_name == "number":
        return actual in ("number", "integer")
    if type_name == "integer":
        return actual == "integer" or (actual == "number" and float(value).is_integer())
    return actual == type_name


def _check(
    value: Any, schema: Any, path: str, out: list[ArgumentMismatch], placeholder: re.Pattern[str] | None,
    depth: int, *, top: bool = False,
) -> None:
    if not isinstance(schema, Mapping) or depth > MAX_DEPTH:
        return
    if placeholder is not None and isinstance(value, str) and placeholder.fullmatch(value):
        return
    branches = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(branches, list) and branches:
        trials = []
        for branch in branches[:16]:
            sub: list[ArgumentMismatch] = []
            _check(value, branch, path, sub, placeholder, depth + 1)
            if not sub:
                return
            trials.append(sub)
        out.extend(min(trials, key=len))
        return
    declared = schema.get("type")
    names = [declared] if isinstance(declared, str) else [t for t in declared or [] if isinstance(t, str)]
    names = [_TYPE_ALIASES.get(n.lower(), n.lower()) for n in names]
    if names and not any(_type_ok(value, n) for n in names):
        out.append(ArgumentMismatch(kind="type", path=path or "<arguments>", expected="|".join(names),
                                    got=_json_type(value),
                                    message=f"{path or 'arguments'} should be {'|'.join(names)}, got {_json_type(value)}"))
        return
    if isinstance(schema.get("enum"), list) and not _in_enum(value, schema["enum"]):
        out.append(ArgumentMismatch(kind="value", path=path, expected=f"one of {schema['enum'][:20]}",
                                    got=_short(value), message=f"{path} must be one of {schema['enum'][:20]}"))
    if "const" in schema and value != schema["const"]:
        out.append(ArgumentMismatch(kind="value", path=path, expected=repr(schema["const"]), got=_short(value),
                                    message=f"{path} must be {schema['const']!r}"))
    if isinstance(value, dict):
        _check_object(value, schema, path, out, placeholder, depth, top)
    elif isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for i, item in enumerate(value[:MAX_ITEMS_CHECKED]):
            _check(item, schema["items"], f"{path}[{i}]", out, placeholder, depth + 1)


def _check_object(
    value: dict[str, Any], schema: Mapping[str, Any], path: str, out: list[ArgumentMismatch],
    placeholder: re.Pattern[str] | None, depth: int, top: bool,
) -> None:
    props = schema.get("properties")
    props = props if isinstance(props, Mapping) else {}
    required = schema.get("required")
    for name in required if isinstance(required, list) else []:
        if isinstance(name, str) and name not in value:
            out.append(ArgumentMismatch(kind="missing", path=_join(path, name), expected="required",
                                        message=f"missing required parameter {_join(path, name)!r}"))
    extra = schema.get("additionalProperties")
    closed = extra is False or (extra is None and (bool(props) or top))
    for key, item in list(value.items())[:MAX_ITEMS_CHECKED]:
        if key in props:
            _check(item, props[key], _join(path, key), out, placeholder, depth + 1)
        elif isinstance(extra, Mapping):
            _check(item, extra, _join(path, key), out, placeholder, depth + 1)
        elif closed:
            out.append(ArgumentMismatch(kind="unexpected", path=_join(path, key), got=_short(item),
                                        message=f"unknown parameter {_join(path, key)!r}"))


def _in_enum(value: Any, options: list[Any]) -> bool:
    return any(value == o and type(value) is type(o) or (_json_type(value) in ("integer", "number")
               and _json_type(o) in ("integer", "number") and value == o) for o in options)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _call_errors(
    index: int, call: ToolCall, specs: dict[str, dict[str, Any]], span: tuple[int, int] | None
) -> list[ParseError]:
    if not specs:
        return []
    if call.name not in specs:
        known = ", ".join(sorted(specs)[:20])
        return [ParseError(kind="unknown_tool", message=f"unknown tool {call.name!r}; available: {known}",
                           span=span, call_index=index, tool=call.name)]
    mismatches = validate_arguments(call.arguments, specs[call.name].get("parameters") or {})
    return [ParseError(kind=m.error_kind, message=m.message, span=span, call_index=index, tool=call.name,
                       field=m.path) for m in mismatches]


class _Shape(Exception):
    """JSON that decoded but is not a tool call."""


class _Parser:
    """Single-use, linear-time parse of one message."""

    def __init__(self, text: str, specs: dict[str, dict[str, Any]], max_calls: int) -> None:
        self.errors: list[ParseError] = []
        if len(text) > MAX_CHARS:
            self.errors.append(ParseError(kind="input_too_large", span=(MAX_CHARS, len(text)),
                                          message=f"message has {len(text)} characters; only the first "
                                                  f"{MAX_CHARS} were read"))
            text = text[:MAX_CHARS]
        self.text = text
        self.specs = specs
        self.max_calls = max(0, max_calls)
        self.calls: list[ToolCall] = []
        self.spans: list[tuple[int, int]] = []
        self.format = "none"
        self.return_mode: str | None = None
        self.removed: list[tuple[int, int]] = []  # spans of call blocks, cut from the content

    # -- think sections
    def split_think(self) -> tuple[list[tuple[int, int]], str]:
        """Outside-think ranges and the joined think text (handles an orphan `</think>` and an unclosed `<think>`)."""
        text, pos, outside, think = self.text, 0, [], []
        first_open, first_close = text.find(_THINK_OPEN), text.find(_THINK_CLOSE)
        if first_close != -1 and (first_open == -1 or first_close < first_open):
            think.append(text[:first_close])  # the chat template opened <think> in the prompt
            pos = first_close + len(_THINK_CLOSE)
        while pos <= len(text):
            start = text.find(_THINK_OPEN, pos)
            if start == -1:
                outside.append((pos, len(text)))
                break
            outside.append((pos, start))
            end = text.find(_THINK_CLOSE, start + len(_THINK_OPEN))
            if end == -1:
                think.append(text[start + len(_THINK_OPEN):])
                break
            think.append(text[start + len(_THINK_OPEN):end])
            pos = end + len(_THINK_CLOSE)
        return [r for r in outside if r[1] > r[0]], "\n".join(t.strip() for t in think if t.strip())

    # -- driver
    def run(self) -> ParsedOutput:
        ranges, think = self.split_think()
        for scan in (self.scan_tags, self.scan_fences, self.scan_bare):
            for start, end in ranges:
                if self.exhausted():
                    break
                scan(start, end)
            if self.format != "none":
                break
        for index, (call, span) in enumerate(zip(self.calls, self.spans, strict=True)):
            self.errors.extend(_call_errors(index, call, self.specs, span))
        content = self.content(ranges)
        return ParsedOutput(content=content, think=think, calls=self.calls, call_spans=self.spans,
                            errors=self.errors, format=self.format,  # type: ignore[arg-type]
                            return_mode=self.return_mode)  # type: ignore[arg-type]

    def exhausted(self) -> bool:
        """Stop scanning once the call cap is reached or errors pile up (bounds work on adversarial input)."""
        return len(self.calls) >= self.max_calls or len(self.errors) > self.max_calls

    def content(self, ranges: list[tuple[int, int]]) -> str:
        """Outside-think text minus the call blocks (both sorted and disjoint: one linear merge)."""
        pieces, removed, k = [], sorted(self.removed), 0
        for start, end in ranges:
            pos = start
            while k < len(removed) and removed[k][1] <= pos:
                k += 1
            while k < len(removed) and removed[k][0] < end:
                pieces.append(self.text[pos:max(pos, removed[k][0])])
                pos = max(pos, removed[k][1])
                if removed[k][1] > end:
                    break
                k += 1
            if pos < end:
                pieces.append(self.text[pos:end])
        return re.sub(r"\n{3,}", "\n\n", "".join(pieces)).strip()

    # -- format 1: <tool_call> tags
    def scan_tags(self, start: int, end: int) -> None:
        text, pos, blocks = self.text, start, 0
        while pos < end and blocks <= self.max_calls:
            match = _TAG_OPEN.search(text, pos, end)
            if match is None:
                return
            blocks += 1
            if self.format not in ("hermes", "tier"):
                self.format = "hermes"
            attrs = match.group("attrs") or ""
            mode = _RETURN_ATTR.search(attrs)
            body = match.end()
            value, json_end, error = self.decode(body, end)
            if error is None:
                block_end = self.block_end(json_end, end)
                self.removed.append((match.start(), block_end))
                self.add(value, (match.start(), block_end), tagged=True)
                if mode and self.format == "tier":
                    self.return_mode = mode.group(1)
                pos = block_end
                continue
            next_open = _TAG_OPEN.search(text, body, end)
            limit = next_open.start() if next_open is not None else end
            close = text.find(_TAG_CLOSE, body, limit)
            block_end = close + len(_TAG_CLOSE) if close != -1 else limit
            kind = "truncated" if close == -1 and next_open is None and error.endswith("@end") else "invalid_json"
            message = error.removesuffix("@end")
            if close == -1 and kind == "invalid_json":
                message += " (and no closing </tool_call>)"
            self.errors.append(ParseError(kind=kind, message=f"tool call block is not valid JSON: {message}",  # type: ignore[arg-type]
                                          span=(match.start(), block_end)))
            self.removed.append((match.start(), block_end))
            pos = block_end

    def block_end(self, json_end: int, end: int) -> int:
        """End of a tag block whose JSON ended at `json_end`: past its `</tool_call>` (optional, since servers often
        strip it as a stop sequence) unless the next block starts first; stray text before the tag is dropped."""
        close = self.text.find(_TAG_CLOSE, json_end, end)
        if close == -1:
            return json_end
        next_open = _TAG_OPEN.search(self.text, json_end, close)
        return json_end if next_open is not None else close + len(_TAG_CLOSE)

    # -- format 2: fenced blocks
    def scan_fences(self, start: int, end: int) -> None:
        text, pos, blocks = self.text, start, 0
        while pos < end and blocks <= self.max_calls:
            open_at = text.find("```", pos, end)
            if open_at == -1:
                return
            line_end = text.find("\n", open_at + 3, end)
            if line_end == -1:
                return
            lang = text[open_at + 3:line_end].strip().lower()
            close = text.find("```", line_end + 1, end)
            body_end = close if close != -1 else end
            block_end = close + 3 if close != -1 else end
            pos = block_end
            if lang not in _CALL_FENCES:
                continue
            blocks += 1
            body = text[line_end + 1:body_end]
            stripped = body.strip()
            if not stripped.startswith(("{", "[")):
                continue
            value, json_end, error = self.decode(line_end + 1, body_end)
            looks_like_call = lang.startswith("tool") or _NAME_START.search(body[:4096]) is not None
            if error is not None:
                if looks_like_call:
                    kind = "truncated" if close == -1 or error.endswith("@end") else "invalid_json"
                    self.format = "fenced"
                    self.errors.append(ParseError(kind=kind, span=(open_at, block_end),  # type: ignore[arg-type]
                                                  message=f"fenced tool call is not valid JSON: {error.removesuffix('@end')}"))
                    self.removed.append((open_at, block_end))
                continue
            if not looks_like_call and not _is_call_shaped(value):
                continue
            self.format = "fenced"
            self.removed.append((open_at, block_end))
            self.add(value, (open_at, block_end), tagged=False)

    # -- format 3: bare JSON
    def scan_bare(self, start: int, end: int) -> None:
        text = self.text
        first = _skip_ws(text, start, end)
        candidates = []
        if first < end and text[first] in "{[":
            candidates.append(first)
        match = _NAME_START.search(text, first, end)
        if match is not None and match.start() not in candidates:
            candidates.append(match.start())
        for at in candidates:
            value, json_end, error = self.decode(at, end)
            explicit = at == first or (isinstance(value, dict) and ("arguments" in value or "parameters" in value
                                                                    or "tool_calls" in value))
            if error is None and explicit and _is_call_shaped(value):
                self.format = "openai" if isinstance(value, dict) and "tool_calls" in value else "json"
                self.removed.append((at, json_end))
                self.add(value, (at, json_end), tagged=False)
                return
            if error is not None and match is not None and at == match.start():
                self.format = "json"
                kind = "truncated" if error.endswith("@end") else "invalid_json"
                self.errors.append(ParseError(kind=kind, span=(at, end),  # type: ignore[arg-type]
                                              message=f"tool call JSON is not valid: {error.removesuffix('@end')}"))
                self.removed.append((at, end))
                return

    # -- JSON and call shapes
    def decode(self, start: int, end: int) -> tuple[Any, int, str | None]:
        """raw_decode at `start` (after whitespace) within [start, end); error strings ending '@end' = truncated."""
        pos = _skip_ws(self.text, start, end)
        if pos >= end:
            return None, pos, "empty block@end"
        segment = self.text[pos:end] if end < len(self.text) else (self.text[pos:] if pos else self.text)
        try:
            value, consumed = _decoder.raw_decode(segment)
        except json.JSONDecodeError as exc:
            at_end = exc.pos >= len(segment.rstrip()) or exc.msg.startswith("Unterminated string")
            return None, pos, f"{exc.msg} at char {pos + exc.pos}" + ("@end" if at_end else "")
        except RecursionError:
            return None, pos, "JSON nested too deeply"
        except ValueError as exc:  # e.g. integers beyond Python's digit limit
            return None, pos, str(exc)[:200]
        return value, pos + consumed, None

    def add(self, value: Any, span: tuple[int, int], *, tagged: bool) -> None:
        try:
            items = _interpret(value)
        except _Shape as exc:
            self.errors.append(ParseError(kind="invalid_call", message=str(exc), span=span))
            return
        except (ValueError, RecursionError) as exc:
            self.errors.append(ParseError(kind="invalid_call", message=f"arguments are not valid JSON: {exc}",
                                          span=span))
            return
        if items and items[0][3]:
            self.format = "tier"
        elif not tagged and items and items[0][4]:
            self.format = "openai"
        for name, arguments, call_id, _tier, _openai in items:
            if len(self.calls) >= self.max_calls:
                if not any(e.kind == "too_many_calls" for e in self.errors):
                    self.errors.append(ParseError(kind="too_many_calls", span=span,
                                                  message=f"more than {self.max_calls} calls; the rest were ignored"))
                return
            index = len(self.calls)
            self.calls.append(ToolCall(id=call_id or f"call_{index}", name=name,
                                       arguments=json.dumps(arguments, ensure_ascii=False)))
            self.spans.append(span)


def _skip_ws(text: str, pos: int, end: int) -> int:
    while pos < end and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _is_call_shaped(value: Any) -> bool:
    try:
        return bool(_interpret(value))
    except (_Shape, ValueError, RecursionError):
        return False


def _interpret(value: Any) -> list[tuple[str, dict[str, Any], str | None, bool, bool]]:
    """JSON value -> [(name, arguments, id, is_tier, is_openai)], or _Shape when it is not a call."""
    if isinstance(value, list):
        if not value:
            raise _Shape("empty list of tool calls")
        out = []
        for item in value[:MAX_CALLS + 1]:
            out.extend(_interpret_one(item))
        return out
    if isinstance(value, dict) and isinstance(value.get("tool_calls"), list):
        return _interpret(value["tool_calls"]) if value["tool_calls"] else []
    return _interpret_one(value)


def _interpret_one(value: Any) -> list[tuple[str, dict[str, Any], str | None, bool, bool]]:
    if not isinstance(value, dict):
        raise _Shape(f"a tool call must be a JSON object, got {_json_type(value)}")
    if isinstance(value.get("function"), dict):  # OpenAI server shape
        fn = value["function"]
        call_id = value.get("id") if isinstance(value.get("id"), str) else None
        return [(_name(fn), _args(fn.get("arguments", {})), call_id, False, True)]
    if "name" in value:
        call_id = value.get("id") if isinstance(value.get("id"), str) else None
        args = value.get("arguments", value.get("parameters", {}))
        return [(_name(value), _args(args), call_id, False, False)]
    if value and all(str(k).isdigit() and isinstance(v, dict) and len(v) == 1 for k, v in value.items()):  # TIER
        out = []
        for key, entry in list(value.items())[:MAX_CALLS + 1]:
            (name, args), = entry.items()
            if not name:
                raise _Shape(f"chained call {key!r} has an empty tool name")
            out.append((name, _args(args), str(key), True, False))
        return out
    raise _Shape("a tool call object needs a \"name\" and \"arguments\" (or TIER {\"0\": {\"Tool\": {args}}})")


def _name(obj: dict[str, Any]) -> str:
    name = obj.get("name")
    if not isinstance(name, str) or not name.strip():
        raise _Shape(f"tool call name must be a non-empty string, got {_short(name)}")
    return name.strip()


def _args(raw: Any) -> dict[str, Any]:
    if raw is None:
        return {}
    if isinstance(raw, str):
        raw = json.loads(raw) if raw.strip() else {}
    if not isinstance(raw, dict):
        raise _Shape(f"tool call arguments must be a JSON object, got {_json_type(raw)}")
    return raw
