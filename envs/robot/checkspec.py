"""Checks as plain data: tasks store JSON-able check specs, trusted code compiles them into temporal checks.

Keeping checks as data (not closures) makes tasks serialisable, identical across processes and readable in
records. A matcher is a dict, a check is a list headed by an operator:

    matcher  {"call": "say", "at": room, "to": room, "words": [...], "entity": text, "options": [...], "min": n}
    check    ["exists", M] ["terminal", M] ["precedes", M1, M2] ["after_first"|"before_first"|"after_last"|
             "before_last", M1, M2 | C] ["at_first_visit", room, M] ["count", M, n] ["reports", M_ask, M_say]
             ["all", C...] ["any", C...] ["not", C]

The operators have the original's semantics (`temporal.py`): a window whose anchor never occurs is the whole trace,
a window's second part may be a check (windows nest: `["after_first", M1, ["before_first", M2, M3]]`), `room` in
`at_first_visit` is a location pattern, and a check that raises (a terminal event of an empty trace) is unsatisfied
as a whole, even under `not`.

Matchers judge what a call *means*, as RoboEval's Ask(question, options) events do, never words found anywhere in
its arguments. Each call has one subject (`subject`): what a say says, where a go_to went, the thing is_in_room asks
about, the object a pick actually took and a place put down (the room's label, not the words used), and
the question of an ask (its options are separate). `at` is the room the call was made in, `to` go_to's resolved
destination, `words` phrases that must all occur in the subject (whole words, case-insensitive), `entity` the
subject exactly (a leading a/an/the aside). `options` (ask only): at least `min` (default: all) of these phrases
are offered, each as its own option (an option naming two of them offers neither).

`reports` holds when, after the first ask matching M_ask, the says matching M_say that name any offered option all
name the answer the person gave (of the latest matching ask before them) and no other option, and there is one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rlvr_gym.envs.robot import temporal as T
from rlvr_gym.envs.robot.simulator import Call

_ARTICLES = ("a ", "an ", "the ")


def words_of(text: str) -> str:
    """Lower-cased words separated by single spaces, padded, so `contains` means whole-word containment."""
    return " " + " ".join("".join(ch if ch.isalnum() else " " for ch in text.lower()).split()) + " "


def contains(text: str, phrase: str) -> bool:
    """Whole-word, case-insensitive containment of `phrase` in `text` (both normalised by `words_of`)."""
    return words_of(phrase) in words_of(text) and bool(phrase.strip())


def subject(c: Call) -> str:
    """What a call is about: the picked label for pick, the question for ask, else the first argument."""
    if c.name in ("pick", "place"):
        return c.result if isinstance(c.result, str) else ""
    if c.name == "ask":
        return c.args[1] if len(c.args) > 1 and isinstance(c.args[1], str) else ""
    return c.args[0] if c.args and isinstance(c.args[0], str) else ""


def options_of(c: Call) -> list[str]:
    """The options an ask offered (strings only); empty for any other call."""
    offered = c.args[2] if c.name == "ask" and len(c.args) > 2 else ()
    return [o for o in offered if isinstance(o, str)] if isinstance(offered, (list, tuple)) else []


def _names(option: str, phrases: Sequence[str]) -> str | None:
    """The one phrase an option names, or None when it names none or several."""
    named = [p for p in phrases if contains(option, p)]
    return named[0] if len(named) == 1 else None


def offered(c: Call, phrases: Sequence[str]) -> set[str]:
    """The phrases an ask offers, each as its own option."""
    return {p for p in (_names(o, phrases) for o in options_of(c)) if p is not None}


def _is(text: str, entity: str) -> bool:
    body = words_of(text).strip() + " "
    for article in _ARTICLES:
        body = body.removeprefix(article)
    return body.strip() == words_of(entity).strip()


def matcher(spec: dict[str, Any]) -> T.Match:
    name, at, to, entity = spec["call"], spec.get("at"), spec.get("to"), spec.get("entity")
    words = [words_of(w) for w in spec.get("words", [])]
    options = list(spec.get("options", []))
    least = int(spec.get("min", len(options)))

    def match(c: Call) -> bool:
        if c.error is not None or c.name != name or (at is not None and c.location != at):
            return False
        if to is not None and c.result != to:
            return False
        text = subject(c)
        if entity is not None and not _is(text, entity):
            return False
        if options and len(offered(c, options)) < least:
            return False
        padded = words_of(text)
        return all(w in padded for w in words)

    return match


def _count(m: T.Match, n: int) -> T.Check:
    return lambda trace: sum(1 for c in T.events(trace) if m(c)) == n


def _others(ask: Call) -> list[str]:
    """The options of an ask other than its answer (and other than options the answer itself contains)."""
    answer = ask.result if isinstance(ask.result, str) else ""
    return [o for o in options_of(ask) if words_of(o) != words_of(answer) and not contains(answer, o)]


def reported(say: Call, ask: Call) -> bool:
    """The say names the ask's answer and no other option it offered."""
    text = subject(say)
    return (
        isinstance(ask.result, str) and contains(text, ask.result) and not any(contains(text, o) for o in _others(ask))
    )


def _reports(ask: T.Match, say: T.Match) -> T.Check:
    """Some say matching `say` after the first matching ask reports an option, and every such say reports exactly
    the answer of the latest matching ask before it (saying each option in turn reports none of them)."""

    def check(trace: Sequence[Call]) -> bool:
        ev = T.events(trace)
        first = next((k for k, c in enumerate(ev) if ask(c)), None)
        if first is None:
            return False
        answered, reports = ev[first], []
        for c in ev[first + 1 :]:
            if ask(c):
                answered = c
            elif say(c) and any(contains(subject(c), o) for o in options_of(answered)):
                reports.append(reported(c, answered))
        return bool(reports) and all(reports)

    return check


_SLICES = {
    "after_first": ("first", "after"),
    "before_first": ("first", "before"),
    "after_last": ("last", "after"),
    "before_last": ("last", "before"),
}


def _compile(spec: list[Any]) -> T.Check:
    """The raw temporal check (an undecided operand propagates, as the original's exceptions do)."""
    op, *rest = spec
    if op == "exists":
        return T.exists(matcher(rest[0]))
    if op == "terminal":
        return T.terminal(matcher(rest[0]))
    if op == "precedes":
        return T.precedes(matcher(rest[0]), matcher(rest[1]))
    if op in _SLICES:
        inner = _compile(rest[1]) if isinstance(rest[1], list) else T.exists(matcher(rest[1]))
        return T.within(T.cut(*_SLICES[op], matcher(rest[0])), inner)
    if op == "at_first_visit":
        return T.act_at_first_visit(rest[0], matcher(rest[1]))
    if op == "count":
        return _count(matcher(rest[0]), int(rest[1]))
    if op == "reports":
        return _reports(matcher(rest[0]), matcher(rest[1]))
    if op == "all":
        return T.all_of(*(_compile(c) for c in rest))
    if op == "any":
        return T.any_of(*(_compile(c) for c in rest))
    if op == "not":
        return T.negate(_compile(rest[0]))
    raise ValueError(f"unknown check operator {op!r}")


def compile_check(spec: list[Any]) -> T.Checker:
    """The check a spec describes, decided as a whole (raising is unsatisfied); ValueError on an unknown operator."""
    return T.Checker(T.raw(_compile(spec)))


def holds(spec: list[Any], trace: Sequence[Call]) -> bool:
    return compile_check(spec)(trace)
