"""GeoX env: answer a spatial program over an aerial-like scene (single-turn deduction)."""

from __future__ import annotations

import random
from typing import Any

from rlvr_gym import AnswerEnv, Task, Verdict

from . import verifier
from .tasks import GeoTasks


class GeoEnv(AnswerEnv):
    family = "geo"
    verify_budget_s = 0.2

    def __init__(
        self, *, split: str = "train", seed: int = 0, render: str = "both", mode: str = "deduction", **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.source = GeoTasks(split=split, seed=seed, render=render, mode=mode)

    def score_answer(self, task: Task, text: str) -> Verdict:
        return verifier.verify(task, [text])

    def wrong_answers(self, task: Task, rng: random.Random) -> list[list[str]]:
        return verifier.wrong_answers(task, rng)
