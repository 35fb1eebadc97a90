"""MBPP-style JSONL loaders: one problem per line, tests as a list of assert statements.

Accepted row shapes (field names of the public releases): original MBPP (`text`, `code`, `test_list`,
`test_setup_code`, `challenge_test_list`), sanitized MBPP (`prompt`, `code`, `test_list`, `test_imports`), and
HumanEval-shaped rows (`prompt`, `entry_point`, `test` with `check(candidate)`, `canonical_solution`), for
exports in that shape. The entry point is the function the first assert calls. `mbpp_sample.jsonl` (next to this module)
is a small sample written for this project (not MBPP's data) in the original MBPP shape.
"""

from __future__ import annotations

import ast
import builtins
import importlib.resources
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .spec import CodeSpec
from .testsuite import build_plan

SAMPLE_FILE = "mbpp_sample.jsonl"


def sample_path() -> str:
    return str(importlib.resources.files(__package__).joinpath(SAMPLE_FILE))


def _called_function(assertion: str) -> str | None:
    try:
        tree = ast.parse(assertion)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id not in vars(builtins):
            return node.func.id
    return None


def _first_def(code: str) -> str | None:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    return names[-1] if names else None


def mbpp_prompt(text: str, example: str | None, entry_point: str) -> str:
    lines = [text.strip(), "", f"Write a Python function named `{entry_point}`."]
    if example:
        lines += ["Your code should pass tests like this one:", f"```python\n{example.strip()}\n```"]
    return "\n".join(lines)


def mbpp_spec(row: dict[str, Any], index: int, show_examples: int = 1) -> tuple[CodeSpec, str]:
    """The hidden spec and the prompt of one row (see the module docstring for the shapes)."""
    if "entry_point" in row and "test" in row:
        spec = CodeSpec(
            entry_point=row["entry_point"],
            preamble=row.get("prompt", "") if "canonical_solution" in row else "",
            test_style="check",
            check_source=row["test"],
            reference_solution=row.get("canonical_solution") or row.get("code", ""),
        )
        examples: list[str] = []
    else:
        asserts = list(row.get("test_list", [])) + list(row.get("challenge_test_list") or [])
        setup = "\n".join(filter(None, [row.get("test_setup_code", ""), *row.get("test_imports", [])]))
        code = row.get("code", "")
        entry = row.get("entry_point") or _called_function(asserts[0] if asserts else "") or _first_def(code)
        if not entry:
            raise ValueError(f"row {index}: cannot tell the entry point")
        spec = CodeSpec(
            entry_point=entry, test_style="asserts", asserts=asserts, test_setup=setup, reference_solution=code
        )
        examples = asserts[:show_examples]
    build_plan(spec)  # validate the tests now: a broken dataset row fails at load time, not mid-training
    text = row.get("text") or row.get("prompt", "")
    return spec, mbpp_prompt(text, examples[0] if examples else None, spec.entry_point)


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    rows = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except ValueError as exc:
                    raise ValueError(f"{path}:{number}: not JSON: {exc}") from exc
    return rows


def mbpp_rows(data_files: str | Path | Sequence[str | Path] | None = None) -> list[dict[str, Any]]:
    """All rows of one or more JSONL files (default: the bundled sample), in file order."""
    files = [data_files] if isinstance(data_files, (str, Path)) else list(data_files or [sample_path()])
    return [row for path in files for row in read_jsonl(path)]
