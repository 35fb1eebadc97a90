"""A small real env for core tests: say the task's number back; optional crash/hang on chosen indices."""

from __future__ import annotations

import time

import pytest

import rlvr_gym
from rlvr_gym import AnswerEnv, Task, Verdict


class EchoNumberEnv(AnswerEnv):
    family = "test"

    def __init__(self, crash_on: tuple[int, ...] = (), hang_on: tuple[int, ...] = (), hang_s: float = 5.0,
                 size: int | None = None, **kwargs):
        super().__init__(**kwargs)
        self.crash_on = set(crash_on)
        self.hang_on = set(hang_on)
        self.hang_s = hang_s
        self.size = size

    @property
    def num_tasks(self):
        return self.size

    def get_task(self, index: int) -> Task:
        return Task(id=f"echo-{index}", prompt=f"Reply with the number {index}.", ground_truth=str(index),
                    reference_actions=[str(index)], metadata={"index": index, "difficulty": index % 2})

    def score_answer(self, task: Task, text: str) -> Verdict:
        if task.metadata["index"] in self.crash_on:
            raise RuntimeError("env exploded")
        if task.metadata["index"] in self.hang_on:
            time.sleep(self.hang_s)
        correct = float(text.strip() == task.ground_truth)
        return Verdict(reward=correct, passed=bool(correct), components={"correct": correct},
                       feedback=None if correct else "wrong")


@pytest.fixture(scope="session", autouse=True)
def echo_env_id() -> str:
    rlvr_gym.register("rlvr/EchoNumber-v0", EchoNumberEnv, family="test", description="core test env")
    return "rlvr/EchoNumber-v0"
