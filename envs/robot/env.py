"""Robot-program envs: a whole program in one answer (`RobotProgramEnv`), or one robot call per turn
(`RobotInteractiveEnv`). Tasks come from `RobotTasks` (ours) or, for evaluation only, `roboeval.RoboEvalTasks`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from rlvr_gym import AnswerEnv, Env, Task, Verdict
from rlvr_gym.env import StepResult, feedback
from rlvr_gym.family import TaskSource

from . import verifier
from .execution import RobotExecutor
from .interactive import CALL_DOC, Session, call_text, judge, parse_call
from .simulator import WorldState
from .tasks import RobotTasks


class RobotProgramEnv(AnswerEnv):
    """Write `def task_program():` for a robot; it runs in the sandbox on every world state of the task."""

    family = "robot"
    verify_budget_s = 2.0

    def __init__(
        self,
        *,
        split: str | None = None,
        seed: int | None = 0,
        kinds: Sequence[str] | None = None,
        size: int | None = None,
        weights: Mapping[str, float] | None = None,
        robustness_runs: int = verifier.ROBUSTNESS_RUNS,
        executor: RobotExecutor | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.weights = verifier._weights(weights)
        self.robustness_runs = robustness_runs
        self.executor = executor
        self.source = self.make_tasks(split=split, seed=seed or 0, kinds=kinds, size=size)

    def make_tasks(self, *, split: str | None, **options: Any) -> TaskSource:
        return RobotTasks(split=split or "train", **options)

    def score_answer(self, task: Task, text: str) -> Verdict:
        return verifier.verify(task, [text], executor=self.executor, weights=self.weights,
                               robustness_runs=self.robustness_runs)  # fmt: skip

    def wrong_answers(self, task: Task, rng: random.Random) -> list[list[str]]:
        return verifier.wrong_answers(task, rng)


class RoboEvalEnv(RobotProgramEnv):
    """EVALUATION ONLY: the original RoboEval tasks from a checkout you supply (see `roboeval.py`, docs/robot.md)."""

    def __init__(self, *, roboeval_path: str | None = None, **kwargs: Any) -> None:
        self.roboeval_path = roboeval_path
        super().__init__(**kwargs)

    def make_tasks(self, *, split: str | None, seed: int, **_ignored: Any) -> TaskSource:
        from .roboeval import RoboEvalTasks

        return RoboEvalTasks(self.roboeval_path, split=split or "eval", seed=seed)


class RobotInteractiveEnv(Env):
    """The same tasks played one robot call per turn on the first world state; `done()` asks for the verdict."""

    family = "robot"
    max_turns = 60
    verify_budget_s = 0.5
    check_exceptions: ClassVar[dict[str, str]] = {}

    def __init__(self, *, split: str = "train", seed: int | None = 0, kinds: Sequence[str] | None = None,
                 size: int | None = None, **kwargs: Any) -> None:  # fmt: skip
        super().__init__(**kwargs)
        self.source = RobotTasks(split=split, seed=seed or 0, kinds=kinds, size=size, mode="interactive")
        self.session: Session | None = None

    def start(self, task: Task) -> list:
        self.session = Session(WorldState.from_json(task.ground_truth["states"][0]))
        return task.prompt_messages()

    def respond(self, action: str) -> StepResult:
        assert self.task is not None and self.session is not None
        parsed = parse_call(action)
        if isinstance(parsed, str):
            return StepResult(observation=feedback(f"Invalid action: {parsed}. {CALL_DOC}"), valid_action=False)
        name, args = parsed
        if name == "done":
            verdict = judge(self.task, self.session.trace)
            return StepResult(reward=verdict.reward, terminated=True, verdict=verdict)
        return StepResult(observation=feedback(f"{call_text(name, args)} -> {self.session.act(name, args)}"))

    def wrong_answers(self, task: Task, rng: random.Random) -> list[list[str]]:
        calls = task.reference_actions or []
        return [["done()"], calls[:-2] + ["done()"], [c for c in calls if not c.startswith("go_to(")]]
