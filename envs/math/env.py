"""Math envs: generated problems (`MathEnv`) and problems from files (`MathDatasetEnv`), both `AnswerEnv`s.

One attempt by default, or up to `max_attempts` with feedback after a wrong answer and the reward of attempt k
scaled by `attempt_decay ** (k - 1)`. Scoring is `verifier.verify`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from rlvr_gym import AnswerEnv, Task, Verdict

from . import verifier
from .dataset import Files, MathDatasetTasks
from .tasks import MathTasks


class _MathEnv(AnswerEnv):
    family = "math"
    verify_budget_s = 0.5

    def __init__(
        self,
        *,
        format_weight: float = 0.0,
        correct_weight: float = 1.0,
        multiple_answers: str = "reject",
        **kwargs: Any,
    ) -> None:
        if multiple_answers != "reject":
            raise ValueError("multiple_answers: only 'reject' is supported (two different answers are never a pass)")
        super().__init__(**kwargs)
        self.weights = {"format_weight": format_weight, "correct_weight": correct_weight}

    def score_answer(self, task: Task, text: str) -> Verdict:
        return verifier.verify(task, [text], **self.weights)

    def wrong_answers(self, task: Task, rng: random.Random) -> list[list[str]]:
        return verifier.wrong_answers(task, rng)


class MathEnv(_MathEnv):
    """Generated problems (arithmetic, fractions, linear, modular, combinatorics, radicals), difficulty 1..5."""

    def __init__(
        self,
        *,
        families: Sequence[str] | dict[str, float] | str | None = None,
        difficulty: int = 2,
        seed: int | None = 0,
        size: int | None = None,
        split: str = "train",
        prompt_style: str = "plain",
        config: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        given = {"families": families, "difficulty": difficulty, "size": size, "prompt_style": prompt_style}
        options = {**(config or {}), **{k: v for k, v in given.items() if v is not None}}
        self.source = MathTasks(split=split, seed=seed or 0, **options)


class MathDatasetEnv(_MathEnv):
    """Problems from JSONL/parquet files (GSM8K `#### n` or MATH `\\boxed{}` answers); the bundled sample by default."""

    def __init__(
        self,
        *,
        data_files: Files = None,
        question_field: str | None = None,
        answer_field: str | None = None,
        max_rows: int | None = None,
        split: str = "train",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.source = MathDatasetTasks(
            data_files, split=split, question_field=question_field, answer_field=answer_field, max_rows=max_rows
        )
