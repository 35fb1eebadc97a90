import pytest
from runner_envs import ProcessTrapEnv, StrictLimitsTrapEnv, TrapEnv

import rlvr_gym


@pytest.fixture(scope="session", autouse=True)
def trap_env_ids() -> dict[str, str]:
    ids = {"trap": "rlvr/Trap-v0", "process": "rlvr/ProcessTrap-v0", "strict": "rlvr/StrictTrap-v0"}
    rlvr_gym.register(ids["trap"], TrapEnv, family="test", description="runner test env")
    rlvr_gym.register(ids["process"], ProcessTrapEnv, family="test", description="runner test env (process)")
    rlvr_gym.register(ids["strict"], StrictLimitsTrapEnv, family="test", description="runner test env (limits)")
    return ids
