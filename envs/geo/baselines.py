"""Blind baselines for GeoX: what a policy earns without looking at the scene, with 95% Wilson intervals.

- `constant`: the one answer (or induction program) that passes the most train tasks, scored on eval tasks: the
  best a constant policy tuned on our generator can do (candidates: every train answer, the labels, a number grid;
  induction: the 40 most common train programs and the bare one-class ones);
- `majority`: the most common reference answer of the train split, scored on the eval split;
- `kind_prior`: per question kind (deduction: the program's top operator; abduction: the hole's kind; induction:
  the answer's kind), the train split's most common answer: a policy that reads the question but not the scene;
- `random`: a uniform draw from the answer space of the task's kind (counts 0..10, log-uniform numbers over
  5..5000, the compass points, yes/no, the colours, the hole's candidates, a grammar program).

`question_mix` counts the DSL primitives the tasks' programs use (the histogram of docs/results/geo.md).
"""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rlvr_gym import Task
from rlvr_gym.summary import wilson_interval

from . import dsl, modes, verifier
from .scene import COLOUR_NAMES
from .tasks import GeoTasks, random_program

INDUCTION_CANDIDATES = 40  # most common train programs tried as constants (each costs five runs per task)
NUMBER_GRID = tuple(sorted({round(5 * 1.05**k, 1) for k in range(150)}))  # 5 .. ~7700, one tolerance step apart


@dataclass(frozen=True)
class Rate:
    """`passed` of `n` tasks, with the 95% Wilson interval."""

    passed: int
    n: int

    @property
    def rate(self) -> float:
        return self.passed / self.n if self.n else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        low, high = wilson_interval(self.passed, self.n) or (0.0, 1.0)
        return (low, high)

    def __str__(self) -> str:
        low, high = self.interval
        return f"{self.rate:.3f} [{low:.3f}, {high:.3f}] ({self.passed}/{self.n})"


def kind_of(task: Task) -> str:
    """The question kind a majority baseline conditions on."""
    truth = task.ground_truth
    if truth["mode"] == "abduction":
        return truth["hole"]["kind"]
    if truth["mode"] == "induction":
        return truth["unit"]
    return f"{truth['program'][0]}:{truth['unit']}"


def answer_of(task: Task) -> str:
    """The reference answer line's text (the last reference action: tools tasks call `segment` first)."""
    return task.reference_actions[-1].removeprefix("ANSWER: ")


def passes(task: Task, answer: str) -> bool:
    return verifier.verify(task, [f"ANSWER: {answer}"]).passed


def constant_candidates(tasks: Sequence[Task]) -> list[str]:
    """Every answer a constant policy could usefully commit to: the tasks' own answers, the hole candidates, the
    categorical labels and a geometric number grid (induction: the tasks' programs and the bare one-class ones)."""
    mode = tasks[0].ground_truth["mode"]
    seen = {answer_of(t) for t in tasks}
    if mode == "induction":  # a program passes a task only if it matches all five scenes: the common ones
        common = {p for p, _ in Counter(answer_of(t) for t in tasks).most_common(INDUCTION_CANDIDATES)}
        bare = {json.dumps([op, ["objects", c]]) for op in ("count", "total_area") for c in dsl.CLASSES}
        return sorted(common | bare)
    if mode == "abduction":  # and a number between each two candidates: it passes where a threshold's step holds both
        numbers = modes.CANDIDATES["num"]
        between = {str((a + b) // 2) for a, b in zip(numbers, numbers[1:], strict=False)}
        return sorted(seen | between | {str(c) for kind in modes.CANDIDATES.values() for c in kind})
    labels = {*dsl.DIRECTIONS, "yes", "no", *COLOUR_NAMES, *(str(n) for n in range(11))}
    return sorted(seen | labels | {f"{x:g}" for x in NUMBER_GRID})


def best_constant(train: Sequence[Task], tasks: Sequence[Task]) -> tuple[str, Rate]:
    """The constant with the most passes on `train`, and its pass rate on `tasks`."""
    best = ("", -1)
    for answer in constant_candidates(train):
        hits = sum(passes(t, answer) for t in train)
        if hits > best[1]:
            best = (answer, hits)
    return best[0], Rate(sum(passes(t, best[0]) for t in tasks), len(tasks))


def majority(train: Sequence[Task], tasks: Sequence[Task]) -> tuple[str, Rate]:
    """The train split's most common answer, and its pass rate on `tasks`."""
    answer = Counter(answer_of(t) for t in train).most_common(1)[0][0]
    return answer, Rate(sum(passes(t, answer) for t in tasks), len(tasks))


def kind_prior(train: Sequence[Task], tasks: Sequence[Task]) -> Rate:
    """Per question kind, the train split's most common answer; scored on `tasks`."""
    by_kind: dict[str, Counter[str]] = {}
    for t in train:
        by_kind.setdefault(kind_of(t), Counter())[answer_of(t)] += 1
    fallback = Counter(answer_of(t) for t in train).most_common(1)[0][0]
    return Rate(
        sum(passes(t, by_kind[k].most_common(1)[0][0] if (k := kind_of(t)) in by_kind else fallback) for t in tasks),
        len(tasks),
    )


def random_answer(task: Task, rng: random.Random) -> str:
    truth = task.ground_truth
    if truth["mode"] == "abduction":
        return str(rng.choice(modes.CANDIDATES[truth["hole"]["kind"]]))
    if truth["mode"] == "induction":
        return json.dumps(random_program(rng))
    unit = truth["unit"]
    if unit == "count":
        return str(rng.randint(0, 10))
    if unit in dsl.UNITS.values():
        return f"{math.exp(rng.uniform(math.log(5), math.log(5000))):.1f}"
    pool = {"dir": dsl.DIRECTIONS, "bool": ("yes", "no"), "str": COLOUR_NAMES}.get(unit, dsl.CLASSES)
    return rng.choice(pool)


def random_baseline(tasks: Sequence[Task], seed: int = 0) -> Rate:
    rng = random.Random(seed)
    return Rate(sum(passes(t, random_answer(t, rng)) for t in tasks), len(tasks))


def question_mix(tasks: Sequence[Task]) -> dict[str, Counter[str]]:
    """Histograms over `tasks`: the top operator (question), every primitive used, the answer kind and, for
    abduction, the operator whose argument is the hole (a number hole is a buffer radius, a near radius or an
    area threshold)."""
    top, used, answers, holes = Counter(), Counter(), Counter(), Counter()
    for t in tasks:
        program = t.ground_truth["program"]
        top[program[0]] += 1
        used.update(set(_operators(program)))
        answers[kind_of(t).split(":")[-1]] += 1
        if "hole" in t.ground_truth:
            holes[modes.get(program, tuple(t.ground_truth["hole"]["path"][:-1]))[0]] += 1
    return {"top": top, "primitives": used, "answer": answers, **({"hole": holes} if holes else {})}


def _operators(program: Any) -> list[str]:
    if not isinstance(program, list):
        return []
    return [program[0], *(op for child in program[1:] for op in _operators(child))]


def tasks_of(n: int, split: str, **kwargs: Any) -> list[Task]:
    source = GeoTasks(split=split, **kwargs)
    return [source.task(i) for i in range(n)]


def measure(n: int, n_train: int | None = None, **kwargs: Any) -> dict[str, Any]:
    """Every baseline for one mode/source (GeoTasks kwargs), on `n` eval tasks (majority fitted on train)."""
    tasks = tasks_of(n, "eval", **kwargs)
    train = tasks_of(n_train or n, "train", **kwargs)
    constant, constant_rate = best_constant(train, tasks)
    common, common_rate = majority(train, tasks)
    return {
        "constant": constant_rate,
        "constant_answer": constant,
        "majority": common_rate,
        "majority_answer": common,
        "kind_prior": kind_prior(train, tasks),
        "random": random_baseline(tasks),
        "oracle": Rate(sum(verifier.verify(t, t.reference_actions).passed for t in tasks), len(tasks)),
        "mix": question_mix(tasks),
    }
