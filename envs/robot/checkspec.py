"""Checks as plain data: tasks store JSON-able check specs, trusted code compiles them into temporal checks.

Keeping checks as data (not closures) makes tasks serialisable, identical across processes and readable in
records. A matcher is a dict, a check is a list headed by an operator:

    matcher  {"call": "say", "at": room, "to": room, "words": [...], "any_of": [...], "min": n}
             call name; room the call was made in; go_to's resolved destination; words that must all occur in the
             call's text (arguments and options; whole words, case-insensitive); at least `min` distinct `any_of` words.
    check    ["exists", M] ["terminal", M] ["precedes", M1, M2] ["after_first"|"before_first"|"after_last"|
             "before_last", M1, M2] ["at_first_visit", room, M] ["count", M, n] ["reports", M_ask, M_say]
             ["all", C...] ["any", C...] ["not", C]

`reports` holds when some say matching M_say, after the first ask matching M_ask, contains that ask's answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rlvr_gym.envs.robot import temporal as T
from rlvr_gym.envs.robot.simulator import Call


def words_of(text: str) -> str:
    """Lower-cased words separated by single spaces, padded, so `contains` means whole-word containment."""
    return " " + " ".join("".join(ch if ch.isalnum() else " " for ch in text.lower()).split()) + " "


def contains(text: str, phrase: str) -> bool:
    """Whole-word, case-insensitive containment of `phrase` in `text` (both normalised by `words_of`)."""
    return words_of(phrase) in words_of(text) and bool(phrase.strip())


def call_text(c: Call) -> str:
    """All text of a call's arguments (ask's options included), for word matching."""
    parts: list[str] = []
    for arg in c.args:
        if isinstance(arg, str):
            parts.append(arg)
        elif isinstance(arg, (list, tuple)):
            parts.extend(a for a in arg if isinstance(a, str))
    return " | ".join(parts)


def matcher(spec: dict[str, Any]) -> T.Match:
    name, at, to = spec["call"], spec.get("at"), spec.get("to")
    words = [words_of(w) for w in spec.get("words", [])]
    any_of, least = sorted({words_of(w) for w in spec.get("any_of", [])}), int(spec.get("min", 1))

    def match(c: Call) -> bool:
        if c.error is not None or c.name != name or (at is not None and c.location != at):
            return False
        if to is not None and c.result != to:
            return False
        if not words and not any_of:
            return True
        text = words_of(call_text(c))
        return all(w in text for w in words) and (not any_of or sum(w in text for w in any_of) >= least)

    return match


def _count(m: T.Match, n: int) -> T.Check:
    return lambda trace: sum(1 for c in trace if m(c)) == n


def _reports(ask: T.Match, say: T.Match) -> T.Check:
    def check(trace: Sequence[Call]) -> bool:
        i = next((k for k, c in enumerate(trace) if ask(c)), None)
        if i is None or not isinstance(trace[i].result, str):
            return False
        answer = trace[i].result
        return any(say(c) and contains(call_text(c), answer) for c in trace[i + 1 :])

    return check


_PAIRS = {
    "precedes": T.precedes,
    "after_first": T.after_first,
    "before_first": T.before_first,
    "after_last": T.after_last,
    "before_last": T.before_last,
}


def compile_check(spec: list[Any]) -> T.Check:
    """The temporal check a spec describes; raises ValueError on an unknown operator (specs are ours)."""
    op, *rest = spec
    if op == "exists":
        return T.exists(matcher(rest[0]))
    if op == "terminal":
        return T.terminal(matcher(rest[0]))
    if op in _PAIRS:
        return _PAIRS[op](matcher(rest[0]), matcher(rest[1]))
    if op == "at_first_visit":
        return T.act_at_first_visit(rest[0], matcher(rest[1]))
    if op == "count":
        return _count(matcher(rest[0]), int(rest[1]))
    if op == "reports":
        return _reports(matcher(rest[0]), matcher(rest[1]))
    if op == "all":
        return T.all_of(*(compile_check(c) for c in rest))
    if op == "any":
        return T.any_of(*(compile_check(c) for c in rest))
    if op == "not":
        return T.negate(compile_check(rest[0]))
    raise ValueError(f"unknown check operator {op!r}")


def holds(spec: list[Any], trace: Sequence[Call]) -> bool:
    return compile_check(spec)(trace)
