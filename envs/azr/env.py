"""The AZR envs: one single-turn env per role, task types cycling by index (or fixed with `task_types=`)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from rlvr_gym.env import AnswerEnv
from rlvr_gym.types import Task, Verdict

from . import verifier
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


class AZRSolveEnv(_AZREnv):
    """`rlvr/AZR-Solve-v0`: deduction, abduction and induction solve tasks on the seed programs."""

    def __init__(self, *, split: str = "train", seed: int = 0, task_types: Sequence[str] | str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.source = AZRSolveTasks(split=split, seed=seed, task_types=task_types)


class AZRProposeEnv(_AZREnv):
    """`rlvr/AZR-Propose-v0`: propose a new task; standalone reward = validity (learnability needs solvers)."""

    def __init__(self, *, split: str = "train", seed: int = 0, task_types: Sequence[str] | str | None = None,
                 num_inputs: int = INDUCTION_INPUTS, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.source = AZRProposeTasks(split=split, seed=seed, task_types=task_types, num_inputs=num_inputs)
