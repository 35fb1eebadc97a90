"""rlvr-gym envs for PrimeIntellect verifiers v1 (taskset id `rlvr-gym-verifiers`).

`RlvrGymTaskset` yields the first `num_tasks` tasks of any registered env (prompt = the env's opening messages;
`info` names env id, seed, task index and task id, never an answer). `RlvrGymEnv.run` plays the env host-side as
the run's user: each model reply is one env step, the env's reply is the next user turn, and the episode's end
ends the exchange. The one reward recorded is the env's verdict (its truncation verdict when the run stopped
first), with the verdict's named components as metrics: nothing the model writes or a task's data holds can set it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import verifiers.v1 as vf

from rlvr_gym.integrations.episode import EnvSession, reply_text, task_rows

REWARD_NAME = "rlvr_verdict"


class RlvrGymConfig(vf.TasksetConfig):
    env_id: str = "rlvr/MathStarter-v0"
    """The registered rlvr-gym env id."""
    num_tasks: int = 100
    """Tasks 0..num_tasks-1 of the env (with `seed` for envs whose task order depends on it)."""
    seed: int = 0
    env_kwargs: dict[str, Any] = {}
    """Options passed to `rlvr_gym.make` (e.g. {"split": "eval"})."""


class RlvrGymData(vf.TaskData):
    info: dict
    """env_id, env_kwargs, seed, task_index, task_id: what the env rebuilds the task from."""


class RlvrGymTask(vf.Task[RlvrGymData, vf.State, vf.TaskConfig]):
    pass


class RlvrGymEnvConfig(vf.EnvConfig):
    player: vf.AgentConfig = vf.AgentConfig()


class RlvrGymEnv(vf.Env[RlvrGymEnvConfig]):
    async def run(self, task: RlvrGymTask, agents: Any) -> None:
        info = task.data.info
        session = await asyncio.to_thread(EnvSession, info["env_id"], info.get("env_kwargs") or {})
        try:
            await asyncio.to_thread(session.reset, task_index=info["task_index"], task_id=info["task_id"])
            async with agents.player.interaction(task) as interaction:
                segment = await interaction.turn()
                while not segment.terminated:
                    result = await asyncio.to_thread(session.act, segment.last_reply)
                    if session.done:
                        break
                    segment = await interaction.turn(reply_text(result))
            verdict = session.final_verdict()
        finally:
            session.close()
        trace = interaction.trace
        trace.record_reward(REWARD_NAME, float(verdict.reward) if verdict is not None else 0.0, 1.0)
        if verdict is not None:
            trace.info["rlvr_passed"] = verdict.passed
            trace.info["rlvr_components"] = dict(verdict.components)
            trace.info["rlvr_truncated"] = not session.done


class RlvrGymTaskset(vf.Taskset[RlvrGymTask, RlvrGymConfig]):
    def load(self) -> Iterator[RlvrGymTask]:
        cfg = self.config
        for row in task_rows(cfg.env_id, cfg.num_tasks, seed=cfg.seed, env_kwargs=cfg.env_kwargs):
            system = [m["content"] for m in row.messages if m["role"] == "system"]
            yield RlvrGymTask(
                RlvrGymData(
                    name=row.task_id,
                    prompt=[m for m in row.messages if m["role"] != "system"],
                    system_prompt="\n\n".join(system) or None,
                    info={
                        "env_id": row.env_id,
                        "env_kwargs": dict(cfg.env_kwargs),
                        "seed": row.seed,
                        "task_index": row.task_index,
                        "task_id": row.task_id,
                    },
                ),
                cfg.task,
            )


__all__ = ["RlvrGymConfig", "RlvrGymData", "RlvrGymEnv", "RlvrGymEnvConfig", "RlvrGymTask", "RlvrGymTaskset"]
