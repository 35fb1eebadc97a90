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
from .program import MAX_RESPONSE_CHARS
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

    def score_answer(self, task: Task, text: str) -> Verdict:
        """The answer as the original runs it: its text rewriting applied first (`convert.py`)."""
        from .convert import convert_program

        if not isinstance(text, str) or len(text) > MAX_RESPONSE_CHARS:
            return super().score_answer(task, text)
        return super().score_answer(task, f"```python\n{convert_program(text)}```")


class RobotInteractiveEnv(Env):
    """The same tasks played one robot call per turn on every world state in turn; `done()` ends each state and,
    after the last, asks for the verdict over the whole trace (also given when the turn limit ends the episode)."""

    family = "robot"
    max_turns = 150
    verify_budget_s = 0.5
    check_exceptions: ClassVar[dict[str, str]] = {}

    def __init__(self, *, split: str = "train", seed: int | None = 0, kinds: Sequence[str] | None = None,
                 size: int | None = None, **kwargs: Any) -> None:  # fmt: skip
        super().__init__(**kwargs)
        self.source = RobotTasks(split=split, seed=seed or 0, kinds=kinds, size=size, mode="interactive")
        self.session: Session | None = None

    def start(self, task: Task) -> list:
        self.states = [WorldState.from_json(s) for s in task.ground_truth["states"]]
        self.traces: list[tuple] = []
        self.session = Session(self.states[0])
        return task.prompt_messages()

    def respond(self, action: str) -> StepResult:
        assert self.task is not None and self.session is not None
        parsed = parse_call(action)
        if isinstance(parsed, str):
            return StepResult(observation=feedback(f"Invalid action: {parsed}. {CALL_DOC}"), valid_action=False)
        name, args = parsed
        if name == "done":
            self.traces.append(self.session.trace)
            if len(self.traces) < len(self.states):
                self.session = Session(self.states[len(self.traces)])
                situation = f"Situation {len(self.traces) + 1} of {len(self.states)}"
                return StepResult(observation=feedback(f"{situation}: the same task again, in a building that may "
                                                       f"differ; the robot is back at its start."))  # fmt: skip
            verdict = judge(self.task, self.traces)
            return StepResult(reward=verdict.reward, terminated=True, verdict=verdict)
        return StepResult(observation=feedback(f"{call_text(name, args)} -> {self.session.act(name, args)}"))

    def truncation_verdict(self) -> Verdict:
        """The turn limit judges what was done: the finished states and the one in progress (as if done)."""
        if self.task is None or self.session is None:
            return super().truncation_verdict()
        verdict = judge(self.task, [*self.traces, self.session.trace])
        return verdict.model_copy(update={"feedback": f"turn limit of {self.max_turns} reached; {verdict.feedback}"})

    def wrong_answers(self, task: Task, rng: random.Random) -> list[list[str]]:
        calls = task.reference_actions or []
        first = calls[: calls.index("done()") + 1] if "done()" in calls else calls
        return [["done()"] * len(self.states_of(task)), calls[:-2] + ["done()"],
                [c for c in calls if not c.startswith("go_to(")], first]  # fmt: skip

    @staticmethod
    def states_of(task: Task) -> list:
        return list(task.ground_truth["states"])
