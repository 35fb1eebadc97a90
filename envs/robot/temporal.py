"""RTL-style temporal checks over a call trace, with the original RoboEval operators' semantics.

A check is a function `trace -> bool`; it first reduces the trace to the original's events (`simulator.events`:
failed go_to/ask calls are events, queries are not, a print ends the trace). Atoms match events
(`call("go_to", "kitchen")`, patterns searched case-insensitively as the original's matchers do); operators
combine them:

- slices `after_first/before_first/after_last/before_last` cut the trace at the first/last match of an anchor and
  return the **whole trace unchanged when the anchor never occurs**, as the original's do (so `after_first(a, b)`
  over a trace without `a` is `exists(b)`); `within` applies a check to a slice, so windows nest;
- `precedes(a, b)` is `after_first(a)` then `exists(b)`;
- `act_at_first_visit(loc, m)` needs a visit matching the pattern `loc`, then `m` before the first go_to whose
  destination lacks `loc` as a whole word (moving between "printer room 1" and "printer room 2" stays inside);
- `terminal(m)` raises `Undecided` on an empty trace, as the original does; the exception passes through `negate`,
  `all_of`, `any_of` and `within`, and the whole check counts as unsatisfied, as the original counts a test that
  raises. Each operator returns a `Checker`: called on a trace it gives that whole-check verdict (never raises);
  composition uses its `raw`, which lets the exception through.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rlvr_gym.envs.robot.simulator import Call, events
from rlvr_gym.envs.robot.simulator import found as search

Match = Callable[[Call], bool]
Check = Callable[[Sequence[Call]], bool]
Slice = Callable[[Sequence[Call]], list[Call]]


class Undecided(Exception):
    """The original's check raises here (a terminal event of an empty trace): the whole test is unsatisfied."""


def _fits(pattern: object, value: object) -> bool:
    if isinstance(pattern, str) and isinstance(value, str):
        return search(pattern, value)
    if isinstance(pattern, str) and isinstance(value, (list, tuple)):  # ask's options: any of them
        return any(isinstance(v, str) and search(pattern, v) for v in value)
    return pattern == value


def call(name: str, *args: object, at: str | None = None) -> Match:
    """Match an event by name and argument patterns (in order; a pattern meets ask's options if any option
    matches), and optionally the room it was made in. Failed go_to/ask calls are events too, as in the original."""

    def match(c: Call) -> bool:
        return (
            c.name == name
            and len(c.args) >= len(args)
            and all(_fits(p, v) for p, v in zip(args, c.args, strict=False))
            and (at is None or c.location == at)
        )

    return match


KINDS = {"go_to": "GoTo", "is_in_room": "CheckEntity", "ask": "Ask", "say": "Say", "pick": "Pick", "place": "Place"}


def values(c: Call) -> tuple[str, str, list[str] | None]:
    """An event as the original's trace line: (kind, value1, value2); Ask is (question, options), the others
    (argument, None)."""
    if c.name == "ask":
        options = c.args[2] if len(c.args) > 2 and isinstance(c.args[2], (list, tuple)) else []
        return KINDS["ask"], str(c.args[1]) if len(c.args) > 1 else "", [str(o) for o in options]
    return KINDS.get(c.name, c.name), str(c.args[0]) if c.args else "", None


def event(kind: str, first: str, second: str | None = None) -> Match:
    """The original's matcher `(kind, regex1, regex2=None)`: same kind, regex1 found in value1 and, when given,
    regex2 found in some element of value2 (Ask's options); regex2 on an event without value2 is undecided."""

    def match(c: Call) -> bool:
        k, v1, v2 = values(c)
        if k != kind or not search(first, v1):
            return False
        if second is None:
            return True
        if v2 is None:
            raise Undecided(f"{kind} has no second value to match {second!r}")
        return any(search(second, v) for v in v2)

    return match


def _first(trace: Sequence[Call], m: Match) -> int | None:
    return next((i for i, c in enumerate(trace) if m(c)), None)


def _last(trace: Sequence[Call], m: Match) -> int | None:
    return next((i for i in range(len(trace) - 1, -1, -1) if m(trace[i])), None)


def decide(check: Check, trace: Sequence[Call]) -> bool:
    """The verdict of a whole check: a check that raises is unsatisfied (the original's evaluation does this)."""
    try:
        return bool(raw(check)(trace))
    except Undecided:
        return False


class Checker:
    """A check: calling it decides the whole check (False where the original raises); `raw` may raise
    `Undecided`, so an operator built on it (not, all, any, a window) is undecided too, as in the original."""

    def __init__(self, fn: Check) -> None:
        self.raw = fn

    def __call__(self, trace: Sequence[Call]) -> bool:
        return decide(self, trace)


def raw(check: Check) -> Check:
    """The undecided-propagating form of a check (plain functions are their own)."""
    return check.raw if isinstance(check, Checker) else check


def exists(m: Match) -> Checker:
    return Checker(lambda trace: any(m(c) for c in events(trace)))


def terminal(m: Match) -> Checker:
    """The last event matches (e.g. the robot ends by speaking in the start room); an empty trace is undecided."""

    def check(trace: Sequence[Call]) -> bool:
        ev = events(trace)
        if not ev:
            raise Undecided("terminal event of an empty trace")
        return m(ev[-1])

    return Checker(check)


def cut(anchor: str, side: str, m: Match) -> Slice:
    """The events after/before the first/last match of `m`; all of them when `m` never matches (as the original)."""

    def slice_(trace: Sequence[Call]) -> list[Call]:
        ev = events(trace)
        i = (_first if anchor == "first" else _last)(ev, m)
        if i is None:
            return ev
        return ev[i + 1 :] if side == "after" else ev[:i]

    return slice_


def within(slice_: Slice, check: Check) -> Checker:
    """`check` over the slice of the trace (nested windows: `within(cut(...), within(cut(...), c))`)."""
    inner = raw(check)
    return Checker(lambda trace: inner(slice_(trace)))


def after_first(a: Match, b: Match) -> Checker:
    return within(cut("first", "after", a), exists(b))


def after_last(a: Match, b: Match) -> Checker:
    return within(cut("last", "after", a), exists(b))


def before_first(a: Match, b: Match) -> Checker:
    return within(cut("first", "before", a), exists(b))


def before_last(a: Match, b: Match) -> Checker:
    return within(cut("last", "before", a), exists(b))


def precedes(a: Match, b: Match) -> Checker:
    """The original's Precedes: `b` occurs after the first `a` (so, when there is no `a`, anywhere)."""
    return after_first(a, b)


def destination(c: Call) -> str:
    """Where a go_to went: the resolved room, or for a failed one the location asked for (its only destination)."""
    if c.error is None and isinstance(c.result, str):
        return c.result
    return c.args[0] if c.args and isinstance(c.args[0], str) else ""


def reaches(pattern: str) -> Match:
    """A successful go_to whose resolved room matches the location pattern (e.g. "printer room" matches
    "printer room 2"). We match the room reached, not the words of the argument, so one call naming several
    rooms is not a visit to each of them; for the rooms a program names, the two agree."""
    return lambda c: c.name == "go_to" and c.error is None and isinstance(c.result, str) and search(pattern, c.result)


def leaves(pattern: str) -> Match:
    """A go_to (failed ones too, as in the original) whose destination lacks `pattern` as a whole word."""
    outside = rf"^(?!.*\b{pattern}\b).*$"  # the original's regex, `pattern` inserted as is
    return lambda c: c.name == "go_to" and search(outside, destination(c))


def act_at_first_visit(room: str, act: Match) -> Checker:
    """The original's ActAtFirst: `act` happens during the first visit to a room matching `room`, i.e. after the
    first go_to there and before the first go_to to a room whose name lacks `room` as a whole word."""
    visit = reaches(room)
    return all_of(exists(visit), within(cut("first", "after", visit), within(cut("first", "before", leaves(room)),
                                                                                exists(act))))  # fmt: skip


def visits(room: str) -> Match:
    """Match a successful go_to whose resolved destination is `room`."""
    return lambda c: c.error is None and c.name == "go_to" and c.result == room


def all_of(*checks: Check) -> Checker:
    parts = [raw(ch) for ch in checks]
    return Checker(lambda trace: all(ch(trace) for ch in parts))


def any_of(*checks: Check) -> Checker:
    parts = [raw(ch) for ch in checks]
    return Checker(lambda trace: any(ch(trace) for ch in parts))


def negate(ch: Check) -> Checker:
    """Not: an undecided operand stays undecided (the original's exception propagates through `not`)."""
    inner = raw(ch)
    return Checker(lambda trace: not inner(trace))
