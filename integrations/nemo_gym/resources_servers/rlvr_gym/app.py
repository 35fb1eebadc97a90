"""A NeMo Gym resources server for any rlvr-gym env (copy this folder into NeMo Gym's `resources_servers/`).

Paired with NeMo Gym's `gymnasium_agent` (configs/rlvr_gym.yaml). Each rollout's session gets its own env, reset
to the task the JSONL row names (`rlvr-gym trainer-data nemo-gym`); each
model response is one env step; the reward is 0 until the episode ends, then the env's verdict.
"""

import asyncio
from typing import Any

from nemo_gym.base_resources_server import BaseResourcesServerConfig
from nemo_gym.openai_utils import NeMoGymResponse
from pydantic import ConfigDict, Field, PrivateAttr, field_validator
from resources_servers.gymnasium import GymnasiumServer

from rlvr_gym.integrations.nemo_gym import EnvSessions


class RlvrGymEnvConfig(BaseResourcesServerConfig):
    # Envs kept at once: more than the rollouts in flight. Sessions `gymnasium_agent` abandons at `max_steps` are
    # never closed by NeMo Gym, so the least recently used are closed beyond this.
    max_sessions: int = Field(4096, ge=1)

    @field_validator("num_workers")
    @classmethod
    def one_process(cls, value: int | None) -> int | None:
        # Envs live in this process, keyed by session; uvicorn workers would each see only some of a rollout's steps.
        if value is not None and value > 1:
            raise ValueError("rlvr_gym keeps each session's env in memory: run it with one worker (num_workers: 1)")
        return value


class RlvrGymEnv(GymnasiumServer):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    config: RlvrGymEnvConfig
    _sessions: EnvSessions = PrivateAttr()

    def model_post_init(self, context: Any) -> None:
        super().model_post_init(context)
        self._sessions = EnvSessions(max_sessions=self.config.max_sessions)

    @property
    def sessions(self) -> EnvSessions:
        return self._sessions

    async def reset(self, metadata: dict, session_id: str | None = None) -> tuple[str | None, dict]:
        return await asyncio.to_thread(self._sessions.reset, metadata, session_id)

    async def step(
        self, action: NeMoGymResponse, metadata: dict, session_id: str | None = None
    ) -> tuple[str | None, float, bool, bool, dict[str, Any]]:
        # `metadata` (the step request's extra fields) is ignored: the task was fixed at reset.
        return await asyncio.to_thread(self._sessions.step, action.model_dump(mode="json"), session_id)

    async def close_session(self, session_id: str | None) -> None:
        self._sessions.close(session_id)
        await super().close_session(session_id)


if __name__ == "__main__":
    RlvrGymEnv.run_webserver()
