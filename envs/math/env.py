"""Math envs: generated problems (`MathEnv`) and problems from files (`MathDatasetEnv`), both `AnswerEnv`s.

One attempt by default, or up to `max_attempts` with feedback after a wrong answer and the reward of attempt k
scaled by `attempt_decay ** (k - 1)`. Scoring is `verifier.verify`.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

from rlvr_gym import AnswerEnv, Task, Verdict
from rlvr_gym.integrations.episode import ActionTool, text_tool

from . import verifier
from .dataset import MathDatasetTasks
from .tasks import MathTasks


class _MathEnv(AnswerEnv):
    family = "math"
    verify_budget_s = 0.5
    trainer_tools: ClassVar[tuple[ActionTool, ...]] = (
        text_tool(
            "answer",
            "Submit your final answer; it is checked exactly as written, so use the format the "
            "task asks for (for example \\boxed{...}).",
            "text",
            "Your final answer text.",
        ),
    )

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

    # Every call is pure Python and bounded (generation; numeric golds only, so extraction and `read_number`, which
    # are linear-time on capped spans, never the symbolic engine): the runner may call it on its loop.
    isolation = "inline"
    task_source = MathTasks  # split, seed and `tasks.MathConfig` (families, difficulty, size, prompt_style)

    def make_source(self, *, config: dict[str, Any] | None = None, **options: Any) -> MathTasks:
        """`config` is a whole MathConfig as a dict; explicit keywords override it and None means "not given"."""
        given = {k: v for k, v in options.items() if v is not None}
        return MathTasks(**{**(config or {}), **given})


class MathDatasetEnv(_MathEnv):
    """Problems from JSONL/parquet files (GSM8K `#### n` or MATH `\\boxed{}` answers); the bundled sample by default."""

    task_source = MathDatasetTasks  # data_files, split, seed, question_field, answer_field, max_rows
