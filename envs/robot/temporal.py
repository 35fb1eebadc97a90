"""RTL-style temporal checks over a call trace: small composable predicates, decided by trusted code.

A check is a function `trace -> bool`. Atoms match calls (`call("go_to", "kitchen")`); operators combine them:
exists, terminal, after/before the first/last match, precedes, and act-at-first-visit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rlvr_gym.envs.robot.simulator import Call

Match = Callable[[Call], bool]
Check = Callable[[Sequence[Call]], bool]


def call(name: str, *args: object, at: str | None = None) -> Match:
    """Match a successful call by name, argument prefix and (optionally) the room it was made in."""

    def match(c: Call) -> bool:
        return (
            c.error is None
            and c.name == name
            and tuple(c.args[: len(args)]) == args
            and (at is None or c.location == at)
        )

    return match


def _first(trace: Sequence[Call], m: Match) -> int | None:
    return next((i for i, c in enumerate(trace) if m(c)), None)


def _last(trace: Sequence[Call], m: Match) -> int | None:
    return next((i for i in range(len(trace) - 1, -1, -1) if m(trace[i])), None)


def exists(m: Match) -> Check:
    return lambda trace: _first(trace, m) is not None


EVENTS = frozenset({"go_to", "say", "ask", "is_in_room", "pick", "place"})  # queries of the robot are not events


def terminal(m: Match) -> Check:
    """The last successful event matches (e.g. the robot ends by speaking in the start room); queries don't count."""
    return lambda trace: bool(ok := [c for c in trace if c.error is None and c.name in EVENTS]) and m(ok[-1])


def _window(anchor: str, side: str, a: Match, b: Match) -> Check:
    def check(trace: Sequence[Call]) -> bool:
        i = (_first if anchor == "first" else _last)(trace, a)
        if i is None:
            return False
        span = trace[i + 1 :] if side == "after" else trace[:i]
        return any(b(c) for c in span)

    return check


def after_first(a: Match, b: Match) -> Check:
    return _window("first", "after", a, b)


def after_last(a: Match, b: Match) -> Check:
    return _window("last", "after", a, b)


def before_first(a: Match, b: Match) -> Check:
    return _window("first", "before", a, b)


def before_last(a: Match, b: Match) -> Check:
    return _window("last", "before", a, b)


def precedes(a: Match, b: Match) -> Check:
    """Every b happens after some a; and at least one a exists (b never comes first)."""

    def check(trace: Sequence[Call]) -> bool:
        i, j = _first(trace, a), _first(trace, b)
        return i is not None and (j is None or i < j)

    return check


def act_at_first_visit(room: str, act: Match) -> Check:
    """The action happens during the first stay in `room` (from arriving until the robot goes somewhere else)."""

    def check(trace: Sequence[Call]) -> bool:
        arrived = _first(trace, visits(room))
        if arrived is None:
            return False
        for c in trace[arrived + 1 :]:
            if c.name == "go_to" and c.error is None and c.result != room:
                return False
            if act(c):
                return True
        return False

    return check


def visits(room: str) -> Match:
    """Match a successful go_to whose resolved destination is `room`."""
    return lambda c: c.error is None and c.name == "go_to" and c.result == room


def all_of(*checks: Check) -> Check:
    return lambda trace: all(ch(trace) for ch in checks)


def any_of(*checks: Check) -> Check:
    return lambda trace: any(ch(trace) for ch in checks)


def negate(ch: Check) -> Check:
    return lambda trace: not ch(trace)
