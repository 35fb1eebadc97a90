"""Deliberately broken envs: each must make exactly the check-env check it targets fail."""

from __future__ import annotations

import random
import re

from rlvr_gym import AnswerEnv, Task, TaskSource, Verdict


class AddTasks(TaskSource):
    family = "brokenadd"

    def task(self, index: int) -> Task:
        a, b = self.draw(index, lambda rng: (rng.randint(0, 999), rng.randint(0, 999)), str)
        return self.make_task(index, prompt=f"{a}+{b}? Answer on a line `Answer: n`.", ground_truth=a + b,
                              reference_actions=[f"Answer: {a + b}"], difficulty=1)


class GoodEnv(AnswerEnv):
    """A correct env: the control that passes every check."""

    def __init__(self, split: str = "train", **kwargs) -> None:
        super().__init__(**kwargs)
        self.source = AddTasks(split=split)

    def answers(self, text: str) -> set[str]:
        return {line[7:].strip() for line in text[:10_000].split("\n") if line.startswith("Answer:")}

    def score_answer(self, task: Task, text: str) -> Verdict:
        found = self.answers(text)
        if len(found) != 1:
            return Verdict.invalid("need exactly one answer")
        ok = found.pop() == str(task.ground_truth)
        return Verdict(reward=float(ok), passed=ok)

    def wrong_answers(self, task: Task, rng: random.Random) -> list[list[str]]:
        return [[f"Answer: {task.ground_truth + d}"] for d in (1, -1, 10)]


class ContainsEnv(GoodEnv):
    """Passes any response that mentions the right number somewhere: a shotgun answer wins."""

    def score_answer(self, task: Task, text: str) -> Verdict:
        ok = f"Answer: {task.ground_truth}" in text
        return Verdict(reward=float(ok), passed=ok)


class QuadraticEnv(GoodEnv):
    """Parses with a regex that backtracks catastrophically on long runs of newlines."""

    def answers(self, text: str) -> set[str]:
        re.match(r"^(\s*\n)*\s*Answer:", text)
        return super().answers(text)


class SaltedEnv(GoodEnv):
    """Builds tasks from Python's per-process salted `hash`: different tasks in every process."""

    def get_task(self, index: int) -> Task:
        task = super().get_task(index)
        return task.model_copy(update={"metadata": {**task.metadata, "salt": hash(f"x{index}") % 97}})


class NoWrongAnswersEnv(GoodEnv):
    def wrong_answers(self, task: Task, rng: random.Random) -> list[list[str]]:
        return AnswerEnv.wrong_answers(self, task, rng)


class FormatCreditEnv(GoodEnv):
    """Pays 0.2 for any single `Answer:` line, right or not: a template echo farms it."""

    def score_answer(self, task: Task, text: str) -> Verdict:
        found = self.answers(text)
        if len(found) != 1:
            return Verdict.invalid("need exactly one answer")
        ok = found.pop() == str(task.ground_truth)
        return Verdict(reward=1.0 if ok else 0.2, passed=ok)


class ValidityCreditEnv(GoodEnv):
    """Pays 0.1 for the family's own no-op action (`pass`), which only its floor hook knows about."""

    def score_answer(self, task: Task, text: str) -> Verdict:
        if text.strip() == "pass":
            return Verdict(reward=0.1, passed=False)
        return super().score_answer(task, text)

    def floor_policies(self, task: Task, rng: random.Random) -> dict[str, list[str]]:
        return {"no_op": ["pass"]}
