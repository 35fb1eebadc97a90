"""Wrong programs made from a task's reference solution, for `rlvr-gym check-env` and mutation studies.

A mutant is the reference program with one deliberate bug in the entry-point function, of one of these kinds:

  return_constant   the function body becomes `return <constant>` (None, 0, "", [] or False)
  return_shifted    every `return v` becomes `return v + 1` (numbers shift, other values raise TypeError)
  negated_compare   one comparison is replaced by its negation (`<` by `>=`, `==` by `!=`, `in` by `not in`)
  wrong_operator    one arithmetic operator is replaced by another (`+` by `-`, `*` by `+`, `//` by `%` ...)
  off_by_one        one integer literal is moved by one
  delete_statement  one statement is removed (`pass` where a block would be empty)

The first two change the value of every call, so any test that checks a value rejects them: they are what
`wrong_answers` (the check-env generator) emits (`CHECK_KINDS`; rejected 2,294 of 2,294 on HumanEval, the
original MBPP and the bundled sample). The other kinds are classic mutation operators whose mutants are
sometimes equivalent to the original or slip past a dataset's weak tests: on the original MBPP 15/455 negated
comparisons, 43/580 operator swaps, 114/575 literal shifts and 47/973 deletions survive (HumanEval: 0/118, 6/116,
15/130, 5/174). That is a property of the tests, not of the verifier, so check-env does not use them;
`mutants(..., kinds=ALL_KINDS)` makes them for mutation-score studies.
Site choices come from the caller's `random.Random`, so the same seed gives the same mutants in any process.
"""

from __future__ import annotations

import ast
import copy
import random
from collections.abc import Callable

from .program import assemble

CHECK_KINDS = ("return_constant", "return_shifted")
ALL_KINDS = (*CHECK_KINDS, "negated_compare", "wrong_operator", "off_by_one", "delete_statement")

_NEGATED: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_SWAPPED: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Add,
    ast.FloorDiv: ast.Mod,
    ast.Mod: ast.FloorDiv,
    ast.Div: ast.Mult,
    ast.Pow: ast.Mult,
    ast.BitAnd: ast.BitOr,
    ast.BitOr: ast.BitAnd,
    ast.LShift: ast.RShift,
    ast.RShift: ast.LShift,
    ast.BitXor: ast.BitAnd,
    ast.MatMult: ast.Mult,
}
_CONSTANTS = (None, 0, "", [], False)


def _entry_function(tree: ast.Module, entry_point: str) -> ast.FunctionDef | None:
    found = None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == entry_point:
            found = node
    return found


def _own_nodes(function: ast.FunctionDef) -> list[ast.AST]:
    """Nodes of `function` outside nested function and class definitions, docstring excluded."""
    nodes: list[ast.AST] = []
    stack: list[ast.AST] = list(function.body[1:] if ast.get_docstring(function) else function.body)
    while stack:
        node = stack.pop()
        nodes.append(node)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(reversed(list(ast.iter_child_nodes(node))))
    return nodes


def _return_constant(function: ast.FunctionDef, rng: random.Random) -> bool:
    value = rng.choice(_CONSTANTS)
    function.body = [ast.Return(value=ast.parse(repr(value), mode="eval").body)]
    return True


def _return_shifted(function: ast.FunctionDef, rng: random.Random) -> bool:
    returns = [n for n in _own_nodes(function) if isinstance(n, ast.Return)]
    for node in returns:
        value = node.value or ast.Constant(None)
        node.value = ast.BinOp(left=value, op=ast.Add(), right=ast.Constant(1))
    return bool(returns)


def _negated_compare(function: ast.FunctionDef, rng: random.Random) -> bool:
    sites = [n for n in _own_nodes(function) if isinstance(n, ast.Compare)]
    if not sites:
        return False
    node = rng.choice(sites)
    position = rng.randrange(len(node.ops))
    node.ops[position] = _NEGATED[type(node.ops[position])]()
    return True


def _wrong_operator(function: ast.FunctionDef, rng: random.Random) -> bool:
    sites = [n for n in _own_nodes(function) if isinstance(n, (ast.BinOp, ast.AugAssign))]
    if not sites:
        return False
    node = rng.choice(sites)
    node.op = _SWAPPED[type(node.op)]()
    return True


def _off_by_one(function: ast.FunctionDef, rng: random.Random) -> bool:
    sites = [n for n in _own_nodes(function) if isinstance(n, ast.Constant) and type(n.value) is int]
    if not sites:
        return False
    node = rng.choice(sites)
    node.value += rng.choice((-1, 1))
    return True


def _delete_statement(function: ast.FunctionDef, rng: random.Random) -> bool:
    blocks = [function] + [n for n in _own_nodes(function) if isinstance(n, ast.stmt)]
    sites = [
        (holder, field, index)
        for holder in blocks
        for field in ("body", "orelse", "finalbody")
        for index, stmt in enumerate(getattr(holder, field, None) or [])
        if isinstance(stmt, ast.stmt) and not (holder is function and index == 0 and ast.get_docstring(function))
    ]
    if not sites:
        return False
    holder, field, index = rng.choice(sites)
    block = getattr(holder, field)
    del block[index]
    if not block and field == "body":
        block.append(ast.Pass())
    return True


_MUTATORS: dict[str, Callable[[ast.FunctionDef, random.Random], bool]] = {
    "return_constant": _return_constant,
    "return_shifted": _return_shifted,
    "negated_compare": _negated_compare,
    "wrong_operator": _wrong_operator,
    "off_by_one": _off_by_one,
    "delete_statement": _delete_statement,
}


def mutant(preamble: str, reference: str, entry_point: str, kind: str, rng: random.Random) -> str | None:
    """The whole program with one `kind` bug in `entry_point`, or None where the kind has no site."""
    try:
        tree = ast.parse(assemble(preamble, reference).source)
    except (SyntaxError, ValueError, RecursionError):
        return None
    tree = copy.deepcopy(tree)
    function = _entry_function(tree, entry_point)
    if function is None or not _MUTATORS[kind](function, rng):
        return None
    source = ast.unparse(ast.fix_missing_locations(tree))
    original = ast.unparse(ast.parse(assemble(preamble, reference).source))
    return source if source != original else None


def mutants(
    preamble: str, reference: str, entry_point: str, rng: random.Random, kinds: tuple[str, ...] = CHECK_KINDS
) -> dict[str, str]:
    """kind -> mutated whole program, for each kind with a site (see the module docstring)."""
    made = {kind: mutant(preamble, reference, entry_point, kind, rng) for kind in kinds}
    return {kind: source for kind, source in made.items() if source is not None}
