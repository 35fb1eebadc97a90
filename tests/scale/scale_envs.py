"""A small real env with chosen misbehaviours, to check how Ray-hosted envs fail (shipped to actors by value)."""

from __future__ import annotations

import os
import time

from rlvr_gym import AnswerEnv, InfraError, Task, Verdict


def _node_id() -> str | None:
    try:
        import ray
    except ImportError:
        return None
    return ray.get_runtime_context().get_node_id() if ray.is_initialized() else None


class ScaleTrapEnv(AnswerEnv):
    """Say the task's number back. Per task index it can crash, raise InfraError, kill its own process or hang.
    The turn info names the process and Ray node that ran the step."""

    family = "test"

    def __init__(self, crash_on=(), infra_on=(), die_on=(), hang_on=(), hang_s: float = 30.0, **kwargs):
        super().__init__(**kwargs)
        self.crash_on, self.infra_on, self.die_on, self.hang_on = (
            set(x) for x in (crash_on, infra_on, die_on, hang_on)
        )
        self.hang_s = hang_s

    def get_task(self, index: int) -> Task:
        return Task(
            id=f"scaletrap/train/{index}",
            prompt=f"Reply with the number {index}.",
            ground_truth=str(index),
            reference_actions=[str(index)],
            metadata={"index": index},
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
        correct = float(text.strip() == task.ground_truth)
        return Verdict(reward=correct, passed=bool(correct), components={"correct": correct})

    def respond(self, action: str):
        result = super().respond(action)
        result.info |= {"pid": os.getpid(), "node": _node_id()}
        return result


class ReadBackPolicy:
    """A test policy: answers with the first number of the last message; kills its own process on `die_on`.
    Deterministic, so a run through Ray replicas must equal a run with the policy in this process."""

    def __init__(self, die_on: int | None = None) -> None:
        self.die_on = die_on

    async def generate(self, requests):
        from rlvr_gym import Generation

        answers = []
        for request in requests:
            text = request.messages[-1].text() if request.messages else ""
            number = "".join(ch for ch in text.split("number")[-1] if ch.isdigit())
            if self.die_on is not None and number == str(self.die_on):
                os._exit(3)
            answers.append(Generation(text=number or "?", finish_reason="stop", latency_s=0.0))
        return answers
