"""Planning how a task's tests are judged: split into counted cases, and which part runs where.

Every statement of the test code that contains a (non-trivial) `assert` becomes one counted case; the other
statements are setup. Each is wrapped in `with __rlvr_case__(label):` so a failing case is recorded and the next
one still runs with its scoping intact (HumanEval's `check` body keeps its locals), and every simple statement
inside a case in `with __rlvr_stmt__():` so a round of the judge can go on collecting calls past one whose value
is not known yet (see `judge.py`). The instrumented module runs in the trusted verifier process; the candidate
is reached only through the calls the plan names. Two modes:

* `values`: the candidate's functions are remote names. Every call `f(*args)` made by the tests sends `args` as
  plain data to the sandbox and gets the return value back as plain data; asserts and comparisons run here.
  Used for every `check(candidate)` test (all 164 HumanEval problems, 1,133 cases) and for assert lists
  whose candidate names are only called on data (original MBPP: 971 of 974; the bundled sample: 10 of 10;
  CodeGen: all).
* `units`: for assert lists that need objects only the candidate's process can build (a class the solution
  defines, lambdas or setup-defined classes and functions in the arguments). Each outermost call of a
  candidate name, arguments included, is an expression the sandbox evaluates after running the setup
  statements it needs (loaded before the candidate, or after it when they use the candidate's classes); its value comes back as plain data and the rest of the
  assert runs here, so expected values (in asserts, or in setup no unit needs) never enter the sandbox. An expression that uses names bound inside the assert
  itself (comprehension variables) cannot be lifted out alone: then the whole assert expression is the unit and
  the sandbox computes its truth value (a `weak` case, counted in `TestPlan.weak_cases`). Original MBPP: 3 tasks
  in units mode (367, 601, 927), 0 weak cases.

This runs on trusted dataset text only; malformed test code raises ValueError at load time.
"""

from __future__ import annotations

import ast
import builtins
import copy
import sys
from dataclasses import dataclass
from typing import Literal

from .spec import CodeSpec

CASE_FN = "__rlvr_case__"
STMT_FN = "__rlvr_stmt__"
UNIT_FN = "__rlvr_unit__"
_SIMPLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Assert)
_BUILTINS = frozenset(vars(builtins))

Mode = Literal["values", "units"]


@dataclass(frozen=True)
class TestPlan:
    """How one task's tests are judged (see the module docstring)."""

    mode: Mode
    source: str  # the instrumented test module, run in the trusted verifier process
    num_cases: int
    preamble: str = ""  # trusted task code the tests rely on (HumanEval helpers such as `poly`), run first
    remote_names: tuple[str, ...] = ()  # values mode: names bound to remote calls of the candidate
    modules: tuple[str, ...] = ()  # stdlib modules the tests use without importing them
    setup: str = ""  # units mode: the test setup statements the units need, run in the sandbox
    setup_after: bool = False  # the setup uses candidate names (MBPP's tree tasks): run it after the candidate
    units: tuple[str, ...] = ()  # units mode: expressions the sandbox evaluates
    weak_cases: int = 0


def _is_case(stmt: ast.stmt) -> bool:
    """A statement holding an assert that can fail (`assert True` is setup, not a test)."""
    return any(isinstance(node, ast.Assert) and not isinstance(node.test, ast.Constant) for node in ast.walk(stmt))


def _call(name: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=ast.Name(name, ast.Load()), args=list(args), keywords=[])


class _StatementGuard(ast.NodeTransformer):
    """Wrap every simple statement in `with __rlvr_stmt__():` (nested function bodies included)."""

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                setattr(node, field, [self._guard(stmt) for stmt in block])
        return node

    @staticmethod
    def _guard(stmt: ast.stmt) -> ast.stmt:
        if isinstance(stmt, _SIMPLE):
            return ast.With(items=[ast.withitem(context_expr=_call(STMT_FN))], body=[stmt])
        return stmt


class _Labeller:
    def __init__(self) -> None:
        self.cases = 0
        self.setups = 0

    def wrap(self, stmt: ast.stmt) -> ast.With:
        if _is_case(stmt):
            label: int | str = self.cases
            self.cases += 1
        else:
            label = f"setup{self.setups}"
            self.setups += 1
        holder = ast.Module(body=[stmt], type_ignores=[])
        _StatementGuard().visit(holder)
        return ast.With(items=[ast.withitem(context_expr=_call(CASE_FN, ast.Constant(label)))], body=holder.body)

    def wrap_all(self, body: list[ast.stmt]) -> list[ast.stmt]:
        return [self.wrap(stmt) for stmt in body]


def _parse(source: str, what: str) -> ast.Module:
    try:
        return ast.parse(source)
    except SyntaxError as exc:
        raise ValueError(f"{what} does not parse: {exc}") from exc


def _unparse(body: list[ast.stmt]) -> str:
    return ast.unparse(ast.fix_missing_locations(ast.Module(body=body, type_ignores=[])))


def _bound_names(tree: ast.AST) -> set[str]:
    """Names a piece of code binds: assignments, loop/comprehension targets, defs, imports, arguments."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return names


def _loaded_names(tree: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _check_plan(spec: CodeSpec) -> TestPlan:
    module = _parse(spec.check_source, "check_source")
    labeller = _Labeller()
    checks = [n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == "check"]
    if not checks:
        raise ValueError("check_source defines no check(candidate) function")
    checks[-1].body = labeller.wrap_all(checks[-1].body)
    module.body.extend(labeller.wrap_all(_parse(f"check({spec.entry_point})", "check call").body))
    return TestPlan("values", _unparse(module.body), labeller.cases, spec.preamble, (spec.entry_point,))


class _UnitLifter(ast.NodeTransformer):
    """Replace each outermost use of a candidate name by `__rlvr_unit__(k)`; collect the lifted expressions."""

    def __init__(self, remote: set[str], units: list[str]) -> None:
        self.remote = remote
        self.units = units

    def _lift(self, node: ast.expr) -> ast.expr:
        self.units.append(ast.unparse(node))
        return _call(UNIT_FN, ast.Constant(len(self.units) - 1))

    def visit_Call(self, node: ast.Call) -> ast.expr:
        if isinstance(node.func, ast.Name) and node.func.id in self.remote:
            return self._lift(node)
        return self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return self._lift(node) if node.id in self.remote and isinstance(node.ctx, ast.Load) else node


def _needs_units(remote: set[str], setup: ast.Module, asserts: list[ast.stmt], reference: str) -> bool:
    """True when the tests need candidate objects, not only candidate calls on data (module docstring)."""
    if any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)) for n in ast.walk(setup)):
        return True
    if _loaded_names(setup) & remote:  # the setup builds objects from the candidate's classes
        return True
    nodes = [node for stmt in asserts for node in ast.walk(stmt)]
    calls = [n for n in nodes if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in remote]
    if any(isinstance(inner, ast.Lambda) for call in calls for inner in ast.walk(call)):
        return True
    try:
        classes = {n.name for n in ast.walk(ast.parse(reference)) if isinstance(n, ast.ClassDef)}
    except SyntaxError:
        classes = set()
    return bool(classes & remote)


def _assert_plan(spec: CodeSpec) -> TestPlan:
    setup = _parse(spec.test_setup, "test_setup")
    asserts: list[ast.stmt] = []
    for index, text in enumerate(spec.asserts):
        statements = _parse(text, f"assert {index}").body
        if not statements:
            raise ValueError(f"assert {index} is empty")
        block = ast.If(test=ast.Constant(True), body=statements, orelse=[]) if len(statements) > 1 else statements[0]
        if not _is_case(block):
            raise ValueError(f"assert {index} contains no assert statement: {text!r}")
        asserts.append(block)
    everything = ast.Module(body=[*setup.body, *asserts], type_ignores=[])
    free = _loaded_names(everything) - _bound_names(everything) - _BUILTINS
    modules = tuple(sorted(name for name in free if name in sys.stdlib_module_names))
    remote = (free - set(modules)) | {spec.entry_point}
    labeller = _Labeller()
    if not _needs_units(remote, setup, asserts, spec.reference_solution):
        body = labeller.wrap_all(setup.body) + labeller.wrap_all(asserts)
        return TestPlan("values", _unparse(body), labeller.cases, remote_names=tuple(sorted(remote)), modules=modules)
    units: list[str] = []
    weak = 0
    lifted = []
    for stmt in asserts:
        before = len(units)
        new = _UnitLifter(remote, units).visit(copy.deepcopy(stmt))
        local = _bound_names(stmt)
        if any(_loaded_names(ast.parse(u, mode="eval")) & local for u in units[before:]):
            del units[before:]
            new = _lift_whole_asserts(stmt, units)
            weak += 1
        lifted.append(new)
    sandbox_setup = _setup_for(units, _parse(spec.test_setup, "test_setup"))
    local_setup = [stmt for stmt in setup.body if not _loaded_names(stmt) & remote]  # the rest needs the candidate
    body = labeller.wrap_all(local_setup) + labeller.wrap_all(lifted)
    return TestPlan(
        "units",
        _unparse(body),
        labeller.cases,
        modules=modules,
        setup=_unparse(sandbox_setup.body),
        setup_after=bool(_loaded_names(sandbox_setup) & remote),
        units=tuple(units),
        weak_cases=weak,
    )


def _touched_names(stmt: ast.stmt) -> set[str]:
    """Names a statement may bind or change: its bindings, the objects under attribute/item stores, and for a
    bare expression (a call that may mutate its receiver or arguments) every name it uses."""
    touched = _bound_names(stmt)
    if isinstance(stmt, ast.Expr):
        return touched | _loaded_names(stmt)
    for node in ast.walk(stmt):
        if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            base = node.value
            while isinstance(base, (ast.Attribute, ast.Subscript)):
                base = base.value
            if isinstance(base, ast.Name):
                touched.add(base.id)
    return touched


def _setup_for(units: list[str], setup: ast.Module) -> ast.Module:
    """The setup statements the units need (transitively), imports included, in their order.

    Anything else in the setup (an `expected = [...]` the asserts compare with) stays out of the sandbox.
    """
    needed = set().union(*(_loaded_names(ast.parse(unit, mode="eval")) for unit in units))
    keep: list[ast.stmt] = []
    for stmt in reversed(setup.body):
        if isinstance(stmt, (ast.Import, ast.ImportFrom)) or _touched_names(stmt) & needed:
            keep.append(stmt)
            needed |= _loaded_names(stmt)
    return ast.Module(body=list(reversed(keep)), type_ignores=[])


def _lift_whole_asserts(stmt: ast.stmt, units: list[str]) -> ast.stmt:
    """Weak fallback: every assert's whole test expression becomes one unit."""

    class Whole(ast.NodeTransformer):
        def visit_Assert(self, node: ast.Assert) -> ast.Assert:
            units.append(ast.unparse(node.test))
            node.test = _call(UNIT_FN, ast.Constant(len(units) - 1))
            return node

    return Whole().visit(stmt)


def build_plan(spec: CodeSpec) -> TestPlan:
    """The judging plan for `spec` (see the module docstring)."""
    plan = _check_plan(spec) if spec.test_style == "check" else _assert_plan(spec)
    if plan.num_cases == 0:
        raise ValueError("the task has no test cases")
    return plan
