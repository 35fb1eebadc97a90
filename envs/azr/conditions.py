"""Per-task targets for the standalone proposer (`rlvr/AZR-Propose-v0`), so that no fixed program keeps its reward.

In self-play a proposal's reward is its learnability for the current solver: a program the solver has learned
stops paying, so repeating one program cannot pay forever. A standalone env has no solver, and a reward of
"valid and different from the two examples shown" is kept by one fixed program (`def f(x): return x + 1` earned
1.0 on every task, issue #42). So each standalone task names a *target*: the argument types and the return type
the proposed program must have (one of 42 pairs) and one construct it must use (a comprehension, `%`, `//`, `*`,
a slice or a comparison); the proposal must also depend on its input (two or more distinct outputs over its
inputs and four probe inputs of that signature, run in the sandbox). A fixed program meets about one target in
100 or fewer; meeting the target means writing a new program for each task.

The oracle's proposal is synthesised from two small templates (reduce the input to an integer `v`, then turn `v`
into the return type), with constants drawn per task; it is checked here (our own code) before it is kept.
"""

from __future__ import annotations

import ast
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from . import bank

PROBES = 4  # extra inputs of the target signature every proposal is also run on


@dataclass(frozen=True)
class ArgKind:
    """One argument signature: its parameter list, input generator and integer-reducing expressions."""

    params: str
    make: Callable[[random.Random], tuple]
    reduce: tuple[tuple[str, str], ...]  # (expression giving an int from the params, hint)


def _word(rng: random.Random) -> str:
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 10)))


def _ints(rng: random.Random) -> list[int]:
    return [rng.randint(-9, 30) for _ in range(rng.randint(2, 7))]


ARGS: dict[str, ArgKind] = {
    "int": ArgKind(
        "n",
        lambda r: (r.randint(-50, 500),),
        (("n * {k1} + {k2}", "a linear map of n"), ("sum(int(d) for d in str(abs(n))) * {k1}", "digit sum of n")),
    ),
    "str": ArgKind(
        "s",
        lambda r: (_word(r),),
        (("sum(ord(c) for c in s) % {m}", "character codes of s"), ("len(s) * {k1} + s.count('{c}')", "length of s")),
    ),
    "list[int]": ArgKind(
        "xs",
        lambda r: (_ints(r),),
        (("sum(xs) * {k1} + {k2}", "sum of the list"), ("len([x for x in xs if x % {m} == {r}])", "counting items")),
    ),
    "int, int": ArgKind(
        "a, b",
        lambda r: (r.randint(-40, 200), r.randint(1, 60)),
        (("a * {k1} + b", "a weighted sum of a and b"), ("(a % {m}) * (b % {m}) + {k2}", "residues of a and b")),
    ),
    "str, int": ArgKind(
        "s, k",
        lambda r: (_word(r), r.randint(0, 12)),
        (("len(s) * {k1} + k", "length of s and k"), ("sum(ord(c) for c in s[: k % 5 + 1])", "a prefix of s")),
    ),
    "list[int], int": ArgKind(
        "xs, k",
        lambda r: (_ints(r), r.randint(-5, 20)),
        (("sum(x for x in xs if x > k) + {k2}", "items above k"), ("len([x for x in xs if x < k]) * {k1}", "below k")),
    ),
}

RETURNS: dict[str, tuple[tuple[str, str], ...]] = {
    "int": (("v * v % {m} + {k2}", "then squared modulo a constant"), ("v // {k1} - {k2}", "then divided")),
    "str": (("str(v)[::-1]", "then written backwards"), ("'abcdefghij'[v % 10] * (v % 3 + 1)", "then spelled")),
    "bool": (("v % {m} == {r}", "then tested for a residue"), ("v > {t}", "then compared with a threshold")),
    "list[int]": (
        ("[v % (i + 2) for i in range({L})]", "then its residues"),
        ("[int(d) for d in str(abs(v))]", "digits"),
    ),
    "list[str]": (("sorted(str(abs(v)))", "then its sorted digits"), ("[str(v)] * (v % 3 + 1)", "then repeated")),
    "tuple": (("divmod(v, {k1})", "then divmod"), ("(v % {m}, v // {m})", "then split by a modulus")),
    "dict": (("{{'q': v // {k1}, 'r': v % {k1}}}", "then quotient and remainder"),),
}


def type_name(value: Any) -> str:
    """The type of a value as the targets name it (`list[int]` only for a non-empty list of ints)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, list) and value:
        inner = {type_name(v) for v in value}
        return f"list[{inner.pop()}]" if len(inner) == 1 else "list"
    return type(value).__name__


def signature_of(args: Sequence[Any]) -> str:
    return ", ".join(type_name(a) for a in args)


CONSTRUCTS: dict[str, tuple[str, Callable[[ast.AST], bool]]] = {
    "comprehension": (
        "a comprehension or generator expression",
        lambda n: isinstance(n, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)),
    ),
    "modulo": ("the % operator", lambda n: isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod)),
    "floor_division": ("the // operator", lambda n: isinstance(n, ast.BinOp) and isinstance(n.op, ast.FloorDiv)),
    "multiplication": ("the * operator", lambda n: isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult)),
    "slicing": ("a slice", lambda n: isinstance(n, ast.Slice)),
    "comparison": ("a comparison", lambda n: isinstance(n, ast.Compare)),
}


def constructs_of(program: str) -> set[str]:
    """The CONSTRUCTS a program uses (empty when it does not parse)."""
    try:
        nodes = list(ast.walk(ast.parse(program)))
    except (SyntaxError, ValueError, RecursionError):
        return set()
    return {name for name, (_, found) in CONSTRUCTS.items() if any(found(n) for n in nodes)}


@dataclass(frozen=True)
class Target:
    """What a standalone proposal must be: its argument signature, return type and one construct it uses."""

    args: str
    returns: str
    construct: str

    def describe(self) -> str:
        return f"`f({self.args}) -> {self.returns}` that uses {CONSTRUCTS[self.construct][0]}"

    def as_dict(self) -> dict[str, str]:
        return {"args": self.args, "returns": self.returns, "construct": self.construct}


def target_problem(target: Target, program: str, inputs: Sequence[tuple], outputs: Sequence[Any]) -> str | None:
    """Why a valid proposal (its inputs, and its outputs on them and on the probes) misses the target, or None."""
    if target.construct not in constructs_of(program):
        return f"the program does not use {CONSTRUCTS[target.construct][0]}"
    for args in inputs:
        if signature_of(args) != target.args:
            return f"the input ({signature_of(args)}) does not have the target signature {target.args}"
    for value in outputs:
        if type_name(value) != target.returns:
            return f"an output is a {type_name(value)}, the target asks for a {target.returns}"
    if len({repr(v) for v in outputs}) < 2:
        return "the output does not depend on the input (the same value on every input and probe)"
    return None


def _constants(rng: random.Random) -> dict[str, Any]:
    m = rng.randint(3, 11)
    return {
        "k1": rng.randint(2, 9),
        "k2": rng.randint(1, 9),
        "m": m,
        "r": rng.randrange(m),
        "t": rng.randint(5, 60),
        "L": rng.randint(3, 6),
        "c": rng.choice("aeiou"),
    }


def synthesise(args: str, returns: str, rng: random.Random) -> tuple[str, str]:
    """(program, hint) of the signature `f(args) -> returns`, constants drawn from `rng`."""
    kind = ARGS[args]
    reduce, first = rng.choice(kind.reduce)
    finish, then = rng.choice(RETURNS[returns])
    values = _constants(rng)
    program = f"def f({kind.params}):\n    v = {reduce.format(**values)}\n    return {finish.format(**values)}"
    return program, f"{first}, {then}"


def draw(args: str, returns: str, rng: random.Random, count: int) -> tuple[Target, str, str, list[tuple], list[tuple]]:
    """A target with a checked oracle: (target, program, hint, `count` distinct inputs, PROBES probe inputs).

    The construct is drawn among those the oracle's program uses, so the oracle always meets its target."""
    make = ARGS[args].make
    for _ in range(50):
        program, hint = synthesise(args, returns, rng)
        target = Target(args, returns, rng.choice(sorted(constructs_of(program))))
        inputs = _distinct(make, rng, count)
        probes = _distinct(make, rng, PROBES)
        outputs = [bank.output_of(program, a) for a in [*inputs, *probes]]  # our own template code
        if len(inputs) == count and target_problem(target, program, inputs, outputs) is None:
            return target, program, hint, inputs, probes
    raise RuntimeError(f"no oracle proposal for f({args}) -> {returns} in 50 draws")


def _distinct(make: Callable[[random.Random], tuple], rng: random.Random, count: int) -> list[tuple]:
    seen: dict[str, tuple] = {}
    for _ in range(200):
        args = make(rng)
        seen.setdefault(repr(args), args)
        if len(seen) == count:
            break
    return list(seen.values())


def draw_target(rng: random.Random, count: int) -> tuple[Target, str, str, list[tuple], list[tuple]]:
    """A uniformly drawn signature (42 pairs) with its construct and checked oracle (see `draw`)."""
    return draw(rng.choice(sorted(ARGS)), rng.choice(sorted(RETURNS)), rng, count)
