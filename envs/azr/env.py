"""The AZR envs: one single-turn env per role, task types cycling by index (or fixed with `task_types=`)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from rlvr_gym.env import AnswerEnv
from rlvr_gym.types import Task, Verdict

from . import floor, verifier
from .blocks import fenced_blocks
from .execution import AZRExecutor
from .tasks import INDUCTION_INPUTS, AZRProposeTasks, AZRSolveTasks


class _AZREnv(AnswerEnv):
    family = "azr"
    step_timeout_s = 60.0

    def __init__(self, *, executor: AZRExecutor | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.executor = executor

    def score_answer(self, task: Task, text: str) -> Verdict:
        return verifier.verify(task, [text], executor=self.executor)

    def wrong_answers(self, task: Task, rng: random.Random) -> list[list[str]]:
        return verifier.wrong_answers(task, rng)

    def floor_policies(self, task: Task, rng: random.Random) -> dict[str, list[str]]:
        """Fixed proposals (`x + 1`, identity, constant, a seed-bank copy): check-env's reward floor (floor.py)."""
        return floor.floor_policies(task)


class AZRSolveEnv(_AZREnv):
    """`rlvr/AZR-Solve-v0`: deduction, abduction and induction solve tasks on the seed programs."""

    def __init__(
        self, *, split: str = "train", seed: int = 0, task_types: Sequence[str] | str | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.source = AZRSolveTasks(split=split, seed=seed, task_types=task_types)

    def reply_well_formed(self, text: str) -> bool:
        """Exactly one answer block (output, input or python): the format, not the answer (`rlvr-gym sft`)."""
        blocks = fenced_blocks(text)
        return not blocks.too_long and sum(len(blocks.all(tag)) for tag in ("output", "input", "python")) == 1


class AZRProposeEnv(_AZREnv):
    """`rlvr/AZR-Propose-v0`: propose a new task for a per-task target; reward = valid AND on target.

    Validity alone is kept by one fixed program, so each task names a target (`conditions.py`); learnability
    needs solvers and lives in the population loop (`rlvr-gym populora`)."""

    def __init__(
        self,
        *,
        split: str = "train",
        seed: int = 0,
        task_types: Sequence[str] | str | None = None,
        num_inputs: int = INDUCTION_INPUTS,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.source = AZRProposeTasks(
            split=split, seed=seed, task_types=task_types, num_inputs=num_inputs, targets=True
        )

    def reply_well_formed(self, text: str) -> bool:
        """One program block and one input block (induction: an inputs block), as the proposal format asks."""
        blocks = fenced_blocks(text)
        return blocks.problem("python") is None and (blocks.one("input") is not None) != (
            blocks.one("inputs") is not None
        )
