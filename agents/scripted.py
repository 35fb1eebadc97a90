"""Deterministic agents behind the same Agent protocol as model agents: for tests, oracle runs and baselines.

- `oracle`: plays the task's own reference actions (the ground-truth solution the task source attached);
- `constant:<text>`: sends the same text every turn (a wrong-answer or garbage baseline);
- `replay:<file.jsonl>`: sends recorded outputs per task id (`{"task_id": ..., "output": ...}` or `"outputs": [...]`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rlvr_gym.agent import Agent, AgentStep, EpisodeContext
from rlvr_gym.types import Message


class OracleAgent(Agent):
    """Plays the task's reference actions, which the runner hands only to agents that declare `reads_reference`."""

    name = "oracle"
    reads_reference = True

    async def act(self, ctx: EpisodeContext, observation: list[Message]) -> AgentStep:
        actions = ctx.reference
        if not actions:
            raise ValueError(f"task {ctx.task.id} carries no reference actions for the oracle")
        return AgentStep(text=actions[min(ctx.turn, len(actions) - 1)])


class ConstantAgent(Agent):
    name = "constant"

    def __init__(self, text: str) -> None:
        self.text = text

    async def act(self, ctx: EpisodeContext, observation: list[Message]) -> AgentStep:
        return AgentStep(text=self.text)


class ReplayAgent(Agent):
    """Replays recorded outputs, turn by turn, keyed by task id; unknown tasks get an empty answer."""

    name = "replay"

    def __init__(self, outputs: Mapping[str, Sequence[str]]) -> None:
        self.outputs = {key: list(value) for key, value in outputs.items()}

    @classmethod
    def from_jsonl(cls, path: str | Path) -> ReplayAgent:
        outputs: dict[str, list[str]] = {}
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            recorded = row["outputs"] if "outputs" in row else [row["output"]]
            outputs[str(row["task_id"])] = [str(text) for text in recorded]
        return cls(outputs)

    async def act(self, ctx: EpisodeContext, observation: list[Message]) -> AgentStep:
        recorded = self.outputs.get(ctx.task.id) or [""]
        return AgentStep(text=recorded[min(ctx.turn, len(recorded) - 1)])


def oracle_agent(arg: str | None = None, **options: Any) -> Agent:
    return OracleAgent()


def constant_agent(arg: str | None = None, **options: Any) -> Agent:
    return ConstantAgent(arg or "")


def replay_agent(arg: str | None = None, **options: Any) -> Agent:
    if not arg:
        raise ValueError("replay agent needs a file: replay:<outputs.jsonl>")
    return ReplayAgent.from_jsonl(arg)
