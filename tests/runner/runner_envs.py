"""Small real envs with chosen misbehaviours for the runner tests (importable by env worker processes)."""

from __future__ import annotations

import os
import re
import time

from rlvr_gym import AnswerEnv, InfraError, Task, Verdict


class TrapEnv(AnswerEnv):
    """Say the task's number back. Per task index it can: crash, hang (sleep), hog the interpreter lock with a
    backtracking regex, raise InfraError, kill its own process, or hang in reset. `pid` lands in the turn info."""

    family = "test"

    def __init__(
        self,
        crash_on=(),
        hang_on=(),
        hog_on=(),
        infra_on=(),
        die_on=(),
        reset_hang_on=(),
        hang_s: float = 20.0,
        size: int | None = None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.crash_on, self.hang_on, self.hog_on = set(crash_on), set(hang_on), set(hog_on)
        self.infra_on, self.die_on, self.reset_hang_on = set(infra_on), set(die_on), set(reset_hang_on)
        self.hang_s = hang_s
        self.size = size

    @property
    def num_tasks(self):
        return self.size

    def get_task(self, index: int) -> Task:
        if index in self.reset_hang_on:
            time.sleep(self.hang_s)
        return Task(
            id=f"trap/train/{index}",
            prompt=f"Reply with the number {index}.",
            ground_truth=str(index),
            reference_actions=[str(index)],
            metadata={"index": index, "difficulty": 1 + index % 2},
        )

    def score_answer(self, task: Task, text: str) -> Verdict:
        index = task.metadata["index"]
        if index in self.crash_on:
            raise RuntimeError("env exploded")
        if index in self.infra_on:
            raise InfraError("sandbox unreachable")
        if index in self.die_on:
            os._exit(3)
        if index in self.hang_on:
            time.sleep(self.hang_s)
        if index in self.hog_on:
            re.fullmatch(r"(a+)+b", "a" * 40)  # exponential backtracking inside C: holds the GIL for minutes
        if not text.strip().lstrip("-").isdigit():
            return Verdict.invalid("no number in the answer")
        correct = float(text.strip() == task.ground_truth)
        return Verdict(
            reward=correct, passed=bool(correct), components={"correct": correct}, feedback=None if correct else "wrong"
        )

    def respond(self, action: str):
        result = super().respond(action)
        result.info["pid"] = os.getpid()
        return result


class ProcessTrapEnv(TrapEnv):
    """The same env, declaring that it must run in a child process."""

    isolation = "process"


class StrictLimitsTrapEnv(TrapEnv):
    """Declares short limits of its own (no CLI flags needed for them to hold)."""

    step_timeout_s = 0.3
    episode_timeout_s = 1.5
    reset_timeout_s = 0.3
