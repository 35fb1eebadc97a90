"""A NeMo Gym resources server for any rlvr-gym env (copy this folder into NeMo Gym's `resources_servers/`).

Paired with NeMo Gym's `gymnasium_agent` (configs/rlvr_gym.yaml). Each rollout's session gets its own env, reset
to the task the JSONL row names (`rlvr-gym trainer-data nemo-gym`); each
model response is one env step; the reward is 0 until the episode ends, then the env's verdict.
"""

import asyncio
from typing import Any

from nemo_gym.openai_utils import NeMoGymResponse
from pydantic import ConfigDict, Field
from resources_servers.gymnasium import GymnasiumServer

from rlvr_gym.integrations.nemo_gym import EnvSessions


class RlvrGymEnv(GymnasiumServer):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    sessions: EnvSessions = Field(default_factory=EnvSessions)

    async def reset(self, metadata: dict, session_id: str | None = None) -> tuple[str | None, dict]:
        return await asyncio.to_thread(self.sessions.reset, metadata, session_id)

    async def step(
        self, action: NeMoGymResponse, metadata: dict, session_id: str | None = None
    ) -> tuple[str | None, float, bool, bool, dict[str, Any]]:
        # `metadata` (the step request's extra fields) is ignored: the task was fixed at reset.
        return await asyncio.to_thread(self.sessions.step, action.model_dump(mode="json"), session_id)

    async def close_session(self, session_id: str | None) -> None:
        self.sessions.close(session_id)
        await super().close_session(session_id)


if __name__ == "__main__":
    RlvrGymEnv.run_webserver()
