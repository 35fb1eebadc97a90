"""What an AZR program may be, checked before anything runs: parsing, the source rules, literals.

A program is a module defining a top-level function `f` that is a pure function of its arguments. That it *is* one
does not rest on this check: the sandbox runs it in the jail (`rlvr_gym.sandboxes.jail`, see `execution.py`),
where nothing but pure builtins and facades of `ALLOWED_MODULES` is reachable and every call runs in a fresh,
deterministic process. This check gives early, clear feedback and applies the jail's source rules before the
sandbox does: imports only from `ALLOWED_MODULES`, no names that would reach the interpreter (`open`, `eval`,
`__import__`, `id`, ...; the jail has none of them anyway), no attribute starting with `_` (`().__class__`,
`collections._sys`), no frame or format-field attribute walks, no bare `except`, no generators or async code.

Arguments and answers are Python literals (`ast.literal_eval` on a bounded text), so no code of the model ever runs
in this process. `strict_equal` compares values without the coercions `==` makes (1 == 1.0 == True).
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import Any

from rlvr_gym.sandboxes.jail import source_problems

MAX_PROGRAM_CHARS = 4000
MAX_LITERAL_CHARS = 4000
ENTRY = "f"
ALLOWED_MODULES = frozenset(
    {"math", "itertools", "collections", "functools", "heapq", "bisect", "string", "re", "operator", "typing"}
)
BANNED_NAMES = frozenset(
    {
        "open", "input", "eval", "exec", "compile", "__import__", "globals", "locals", "vars", "id", "hash",
        "breakpoint", "exit", "quit", "help", "memoryview", "getattr", "setattr", "delattr", "object",
        "super", "classmethod", "staticmethod", "property", "__builtins__",
    }
)
_LITERAL_ERRORS = (ValueError, TypeError, SyntaxError, MemoryError, RecursionError, OverflowError)


@dataclass(frozen=True)
class ProgramCheck:
    """The outcome of the static check: `error` is None for an acceptable program."""

    source: str
    error: str | None = None
    canonical: str = ""  # ast.dump without positions: equal for programs differing only in layout and comments

    @property
    def ok(self) -> bool:
        return self.error is None


def _violation(tree: ast.Module) -> str | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            bad = [a.name for a in node.names if a.name.split(".")[0] not in ALLOWED_MODULES]
            if bad:
                return f"import of {bad[0]!r} is not allowed"
        elif isinstance(node, ast.ImportFrom):
            if node.level or (node.module or "").split(".")[0] not in ALLOWED_MODULES:
                return f"import from {node.module!r} is not allowed"
        elif isinstance(node, ast.Name) and node.id in BANNED_NAMES:
            return f"the name {node.id!r} is not allowed"
        elif isinstance(node, (ast.AsyncFunctionDef, ast.Await, ast.AsyncFor, ast.AsyncWith, ast.Yield,
                               ast.YieldFrom, ast.Global, ast.Nonlocal)):
            return f"{type(node).__name__} is not allowed"
    rules = source_problems(tree)
    return f"not allowed: {rules[0]}" if rules else None


def check_program(source: str) -> ProgramCheck:
    """Parse and vet a program (never raises; the verdict on failure is in `error`)."""
    if len(source) > MAX_PROGRAM_CHARS:
        return ProgramCheck(source, f"the program is longer than {MAX_PROGRAM_CHARS} characters")
    try:
        source.encode("utf-8")
        tree = ast.parse(source)
    except (*_LITERAL_ERRORS, UnicodeError) as exc:
        return ProgramCheck(source, f"the program does not parse: {type(exc).__name__}")
    entries = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == ENTRY]
    if len(entries) != 1:
        return ProgramCheck(source, f"the program must define exactly one top-level function `{ENTRY}`")
    problem = _violation(tree)
    if problem:
        return ProgramCheck(source, problem)
    for node in ast.walk(tree):  # docstrings do not change what a program computes
        if isinstance(node, (ast.FunctionDef, ast.Module)) and node.body and _is_docstring(node.body[0]):
            node.body = node.body[1:] or [ast.Pass()]
    return ProgramCheck(source, None, ast.dump(tree, annotate_fields=False, include_attributes=False))


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def parse_literal(text: str) -> tuple[bool, Any]:
    """(True, value) for a Python literal of bounded size, else (False, why)."""
    text = text.strip()
    if not text or len(text) > MAX_LITERAL_CHARS:
        return False, "empty or too long"
    try:
        return True, ast.literal_eval(ast.parse(text, mode="eval"))
    except _LITERAL_ERRORS as exc:
        return False, f"not a Python literal ({type(exc).__name__})"


def parse_args(text: str) -> tuple[bool, Any]:
    """(True, args tuple) when `text` is the argument list of one call `f(<text>)` made of literals only."""
    text = text.strip()
    if not text or len(text) > MAX_LITERAL_CHARS:
        return False, "empty or too long"
    try:
        call = ast.parse(f"{ENTRY}(\n{text}\n)", mode="eval").body
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == ENTRY):
            return False, "not one argument list"
        if call.keywords or any(isinstance(a, ast.Starred) for a in call.args) or not call.args:
            return False, "use positional literal arguments only"
        return True, tuple(ast.literal_eval(a) for a in call.args)
    except _LITERAL_ERRORS as exc:
        return False, f"arguments are not Python literals ({type(exc).__name__})"


def strict_equal(a: Any, b: Any) -> bool:
    """Equality that also demands equal types at every level (1, 1.0 and True are three different answers)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, complex):
        return strict_equal(a.real, b.real) and strict_equal(a.imag, b.imag)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        if len(a) != len(b) or a.keys() != b.keys():
            return False
        keys_b = {_typed_key(k): k for k in b}
        return all(_typed_key(k) in keys_b and strict_equal(a[k], b[keys_b[_typed_key(k)]]) for k in a)
    if isinstance(a, (set, frozenset)):
        return len(a) == len(b) and {_typed_key(x) for x in a} == {_typed_key(x) for x in b}
    return a == b


def _typed_key(value: Any) -> Any:
    """A hashable key that tells 1, 1.0 and True apart (for set elements and dict keys)."""
    if isinstance(value, (tuple, frozenset)):
        return (type(value).__name__, tuple(sorted(map(repr, map(_typed_key, value)))) if isinstance(
            value, frozenset) else tuple(map(_typed_key, value)))
    return (type(value).__name__, value)


def literal_text(value: Any) -> str:
    """A literal for `value` that `parse_literal` reads back, independent of the process's hash seed (sets sorted)."""
    if isinstance(value, list):
        return "[" + ", ".join(literal_text(v) for v in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(literal_text(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{literal_text(k)}: {literal_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, set):
        return "{" + ", ".join(sorted(literal_text(v) for v in value)) + "}" if value else "set()"
    return repr(value)


def args_text(args: tuple) -> str:
    """The argument list `a, b, c` of a call (inverse of `parse_args`)."""
    return ", ".join(literal_text(a) for a in args)


def expressible(value: Any) -> bool:
    """True when `value` can be written as a literal answer that reads back as exactly this value."""
    try:
        text = literal_text(value)
    except (ValueError, RecursionError):
        return False
    ok, back = parse_literal(text)
    return ok and strict_equal(back, value)
