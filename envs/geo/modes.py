"""Abduction and induction items (spec §3.3): holes in programs and programs from examples.

Both are checked only by re-executing programs on ground-truth scenes, never by comparing program text.
"""

from __future__ import annotations

import re
from typing import Any

from . import dsl

HOLE = "?"
# ASCII digits only: `str.isdigit` also accepts "²" and "①", which int() refuses.
_NUM_LITERAL = re.compile(r"[0-9]{1,4}")
# Number holes take any integer 0..9999; these are the ones tasks are built on (and wrong answers drawn from).
# Twenty-five of them, so that abduction's cycle over every candidate of every kind is 44 long: a constant hole
# answer fits 1 task in 44.
CANDIDATES = {
    **dsl.LITERALS,
    "num": (5, 10, 15, 20, 25, 30, 35, 40, 50, 60, 70, 80, 90, 100, 120, 150, 200, 250, 300, 400, 500, 600, 800,
            1000, 1500),
}  # fmt: skip


def literal_slots(program: Any, path: tuple[int, ...] = ()) -> list[tuple[tuple[int, ...], str]]:
    """Paths of literal arguments with their kind (cls, quadrant, num, color, key)."""
    if not isinstance(program, list):
        return []
    arg_types = dsl.SIGNATURES[program[0]][0]
    slots = []
    for i, (want, arg) in enumerate(zip(arg_types, program[1:], strict=True), start=1):
        if isinstance(arg, list):
            slots.extend(literal_slots(arg, (*path, i)))
        else:
            slots.append(((*path, i), dsl.literal_kind(want) or "num"))
    return slots


def substitute(program: Any, path: tuple[int, ...], value: Any) -> Any:
    if not path:
        return value
    copy = list(program)
    copy[path[0]] = substitute(program[path[0]], path[1:], value)
    return copy


def get(program: Any, path: tuple[int, ...]) -> Any:
    for i in path:
        program = program[i]
    return program


def parse_literal(kind: str, text: str) -> Any:
    """A hole answer as a literal of its kind, or None."""
    if kind == "num":
        return int(text) if _NUM_LITERAL.fullmatch(text) else None
    return text if text in CANDIDATES[kind] else None


def outcome(program: Any, scene) -> str | None:
    try:
        value, _ = dsl.evaluate(program, scene)
    except dsl.ProgramError:
        return None
    return value
