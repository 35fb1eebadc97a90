"""Verdicts for geo answers: exactly one `ANSWER: <value>` line, compared with the spec tolerances."""

from __future__ import annotations

import json
import random
import re
from typing import Any

from rlvr_gym import Task, Verdict

from . import dsl, modes
from .scene import CLASSES, COLOUR_NAMES
from .sources import get_source

MAX_RESPONSE = 20_000
ATTRIBUTE_VALUES = (
    *COLOUR_NAMES,
    "rect",
    "disc",
    "poly",
    "line",
    "alive",
    "dead",
    "building=yes",
    "highway=residential",
)
# ASCII only: `\d` and `str.upper()` would let other scripts' digits ("٣", "３") and letters ("ſ" upper-cases to
# "S") stand for distinct answers and labels; float() and int() accept some of those and refuse others.
_NUMBER = re.compile(r"-?[0-9]{1,9}(?:\.[0-9]{1,6})?")
_LABEL = re.compile(r"answer:", re.IGNORECASE | re.ASCII)


def extract(text: str) -> str | None:
    """The single committed answer, or None when absent or ambiguous (two different answers)."""
    if not isinstance(text, str) or len(text) > MAX_RESPONSE:
        return None
    found = {line.strip()[7:].strip() for line in text.splitlines() if _LABEL.match(line.strip())}
    return found.pop() if len(found) == 1 else None


def _number(answer: str) -> float | int | None:
    if not _NUMBER.fullmatch(answer):
        return None
    value = float(answer)
    return int(value) if value.is_integer() else value


def _matches(unit: str, expected: Any, given: Any) -> bool:
    return given is not None and dsl.answers_equal(unit, expected, given)


def _scene(truth: dict[str, Any], seed: int):
    return get_source(truth["scene_source"]).scene(seed)


def _judge_value(truth: dict[str, Any], answer: str) -> Verdict:
    unit = truth["unit"]
    if unit in dsl.UNITS.values():
        given = _number(answer)
        if given is None:
            return Verdict.invalid("the answer is not a number")
    else:
        given = answer
    return _verdict(_matches(unit, truth["value"], given))


def _judge_hole(truth: dict[str, Any], answer: str) -> Verdict:
    hole = truth["hole"]
    literal = modes.parse_literal(hole["kind"], answer)
    if literal is None:
        return Verdict.invalid(f"type_error: not a {hole['kind']} literal")
    program = modes.substitute(hole["shown"], tuple(hole["path"]), literal)
    return _verdict(_matches(truth["unit"], truth["value"], modes.outcome(program, _scene(truth, truth["scene_seed"]))))


def _judge_program(truth: dict[str, Any], answer: str) -> Verdict:
    try:
        program = dsl.parse(answer)
        dsl.typecheck(program)
    except dsl.ProgramError as exc:
        return Verdict.invalid(str(exc))
    hits = [
        _matches(truth["unit"], value, modes.outcome(program, _scene(truth, seed)))
        for seed, value in zip(truth["seeds"], truth["values"], strict=True)
    ]
    verdict = _verdict(all(hits))
    verdict.components["scenes_matched"] = float(sum(hits))
    return verdict


def _verdict(ok: bool) -> Verdict:
    return Verdict(
        reward=1.0 if ok else 0.0,
        passed=ok,
        components={"correct": float(ok)},
        feedback="correct" if ok else "incorrect",
    )


JUDGES = {"deduction": _judge_value, "abduction": _judge_hole, "induction": _judge_program}


def verify(task: Task, trajectory: list[str]) -> Verdict:
    """Extract the one committed answer, then decide by trusted execution on ground-truth scenes."""
    if not trajectory or not isinstance(trajectory[-1], str):
        return Verdict.invalid("no answer")
    answer = extract(trajectory[-1])
    if answer is None:
        return Verdict.invalid("expected exactly one line `ANSWER: <value>`")
    truth = task.ground_truth
    return JUDGES[truth["mode"]](truth, answer)


def wrong_answers(task: Task, rng: random.Random) -> list[list[str]]:
    """Near-miss numbers, a wrong compass point / class / yes-no, a wrong hole literal, a mutated program."""
    truth = task.ground_truth
    mode, value, unit = truth["mode"], truth["value"], truth["unit"]
    if mode == "abduction":
        others = [c for c in modes.CANDIDATES[truth["hole"]["kind"]] if c != truth["hole"]["answer"]]
        return [[f"ANSWER: {c}"] for c in others if not verify(task, [f"ANSWER: {c}"]).passed][:3]
    if mode == "induction":
        edits = [(path, c) for path, kind in modes.literal_slots(truth["program"]) for c in modes.CANDIDATES[kind]]
        rng.shuffle(edits)  # then verify only until three fail: each check runs the program on five scenes
        mutants = []
        for path, c in edits:
            text = f"ANSWER: {json.dumps(modes.substitute(truth['program'], path, c))}"
            if len(mutants) < 3 and not verify(task, [text]).passed:
                mutants.append([text])
        return mutants or [['ANSWER: ["count", ["objects", "road"]]']]
    if unit == "count":
        return [[f"ANSWER: {value + d}"] for d in (1, -1, 2) if value + d >= 0]
    if unit in dsl.UNITS.values():
        step = 1.5 * dsl.tolerance(unit, value)
        return [[f"ANSWER: {value + sign * step:.1f}"] for sign in (1, -1, 3) if value + sign * step >= 0]
    pool = {"dir": dsl.DIRECTIONS, "bool": ("yes", "no"), "str": ATTRIBUTE_VALUES}.get(unit, CLASSES)
    others = [p for p in pool if p != value]
    return [[f"ANSWER: {o}"] for o in rng.sample(others, min(2, len(others)))]
