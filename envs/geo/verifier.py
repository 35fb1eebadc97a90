"""Verdicts for geo answers: exactly one `ANSWER: <value>` line, compared with the spec tolerances."""

from __future__ import annotations

import random
import re

from rlvr_gym import Task, Verdict

from . import dsl

MAX_RESPONSE = 20_000
_NUMBER = re.compile(r"-?\d{1,9}(?:\.\d{1,6})?")


def extract(text: str) -> str | None:
    """The single committed answer, or None when absent or ambiguous (two different answers)."""
    if len(text) > MAX_RESPONSE:
        return None
    found = {line.strip()[7:].strip() for line in text.splitlines() if line.strip().upper().startswith("ANSWER:")}
    return found.pop() if len(found) == 1 else None


def verify(task: Task, trajectory: list[str]) -> Verdict:
    truth = task.ground_truth
    if not trajectory or not isinstance(trajectory[-1], str):
        return Verdict.invalid("no answer")
    answer = extract(trajectory[-1])
    if answer is None:
        return Verdict.invalid("expected exactly one line `ANSWER: <value>`")
    unit = truth["unit"]
    if unit in dsl.UNITS.values():
        if not _NUMBER.fullmatch(answer):
            return Verdict.invalid("the answer is not a number")
        given: object = float(answer) if "." in answer else int(answer)
        if isinstance(truth["value"], int) and isinstance(given, float):
            given = given if not given.is_integer() else int(given)
    else:
        given = answer
    ok = dsl.answers_equal(unit, truth["value"], given)
    return Verdict(
        reward=1.0 if ok else 0.0,
        passed=ok,
        components={"correct": float(ok)},
        feedback="correct" if ok else "incorrect",
    )


def wrong_answers(task: Task, rng: random.Random) -> list[list[str]]:
    """Near-miss numbers, a wrong compass point, a wrong class or yes/no flipped."""
    value, unit = task.ground_truth["value"], task.ground_truth["unit"]
    if unit == "count":
        return [[f"ANSWER: {value + d}"] for d in (1, -1, 2) if value + d >= 0]
    if unit in dsl.UNITS.values():
        step = 1.5 * dsl.tolerance(unit, value)
        return [[f"ANSWER: {value + sign * step:.1f}"] for sign in (1, -1, 3) if value + sign * step >= 0]
    pool = {"dir": dsl.DIRECTIONS, "bool": ("yes", "no")}.get(unit, ("road", "water", "building", "tree", "vehicle"))
    others = [p for p in pool if p != value]
    return [[f"ANSWER: {o}"] for o in rng.sample(others, min(2, len(others)))]
