"""Splitting a task's tests into individually scored cases and instrumenting them for the harness.

Every statement of the test code that contains a (non-trivial) `assert` becomes one counted case; the other
statements are setup. Each statement is wrapped in `with __rlvr_case__(label):`, so a failing case is recorded
and the next one still runs, with the statement's original scoping intact (HumanEval's `check` body keeps its
locals). `==`/`!=` comparisons inside asserts become `__rlvr_eq__`/`__rlvr_ne__` calls, which refuse operands
whose equality is overridden by the candidate's own code (the "always equal" object hack).

This runs on trusted dataset text only; malformed test code raises ValueError at load time.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .spec import CodeSpec

CASE_FN = "__rlvr_case__"
EQ_FN = "__rlvr_eq__"
NE_FN = "__rlvr_ne__"


@dataclass(frozen=True)
class TestSuite:
    """Instrumented test module source plus the number of counted cases it reports on."""

    source: str
    num_cases: int


def _is_case(stmt: ast.stmt) -> bool:
    """A statement holding an assert that can fail (`assert True` is setup, not a test)."""
    return any(
        isinstance(node, ast.Assert) and not isinstance(node.test, ast.Constant) for node in ast.walk(stmt)
    )


class _GuardEquality(ast.NodeTransformer):
    """Rewrite `a == b` / `a != b` inside asserts into guarded helper calls."""

    def visit_Assert(self, node: ast.Assert) -> ast.Assert:
        node.test = _CompareRewriter().visit(node.test)
        return node


class _CompareRewriter(ast.NodeTransformer):
    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        self.generic_visit(node)
        if len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
            name = EQ_FN if isinstance(node.ops[0], ast.Eq) else NE_FN
            return ast.Call(func=ast.Name(name, ast.Load()), args=[node.left, node.comparators[0]], keywords=[])
        return node


class _Labeller:
    def __init__(self) -> None:
        self.cases = 0
        self.setups = 0

    def wrap(self, stmt: ast.stmt) -> ast.With:
        if _is_case(stmt):
            stmt = _GuardEquality().visit(stmt)
            label: int | str = self.cases
            self.cases += 1
        else:
            label = f"setup{self.setups}"
            self.setups += 1
        call = ast.Call(func=ast.Name(CASE_FN, ast.Load()), args=[ast.Constant(label)], keywords=[])
        return ast.With(items=[ast.withitem(context_expr=call)], body=[stmt])

    def wrap_all(self, body: list[ast.stmt]) -> list[ast.stmt]:
        return [self.wrap(stmt) for stmt in body]


def _parse(source: str, what: str) -> ast.Module:
    try:
        return ast.parse(source)
    except SyntaxError as exc:
        raise ValueError(f"{what} does not parse: {exc}") from exc


def _check_suite(spec: CodeSpec) -> TestSuite:
    module = _parse(spec.check_source, "check_source")
    labeller = _Labeller()
    checks = [n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == "check"]
    if not checks:
        raise ValueError("check_source defines no check(candidate) function")
    checks[-1].body = labeller.wrap_all(checks[-1].body)
    call = _parse(f"check({spec.entry_point})", "check call").body
    module.body.extend(labeller.wrap_all(call))
    return TestSuite(ast.unparse(ast.fix_missing_locations(module)), labeller.cases)


def _assert_suite(spec: CodeSpec) -> TestSuite:
    labeller = _Labeller()
    body = labeller.wrap_all(_parse(spec.test_setup, "test_setup").body)
    for index, text in enumerate(spec.asserts):
        statements = _parse(text, f"assert {index}").body
        if not statements:
            raise ValueError(f"assert {index} is empty")
        block = ast.If(test=ast.Constant(True), body=statements, orelse=[]) if len(statements) > 1 else statements[0]
        if not _is_case(block):
            raise ValueError(f"assert {index} contains no assert statement: {text!r}")
        body.append(labeller.wrap(block))
    return TestSuite(ast.unparse(ast.fix_missing_locations(ast.Module(body=body, type_ignores=[]))), labeller.cases)


def build_suite(spec: CodeSpec) -> TestSuite:
    """The instrumented test module for `spec` (see the module docstring)."""
    suite = _check_suite(spec) if spec.test_style == "check" else _assert_suite(spec)
    if suite.num_cases == 0:
        raise ValueError("the task has no test cases")
    return suite
