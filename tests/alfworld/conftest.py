"""Shared ALFWorld fixtures: one generated game set per test session, in a session-private cache dir."""

from __future__ import annotations

import os

import pytest
from alfworld_cases import GAMES_PER_TYPE


@pytest.fixture(scope="session")
def alfworld_cache(tmp_path_factory) -> str:
    """A session-private game cache; RLVR_GYM_ALFWORLD_TEST_CACHE names a kept one (faster reruns while developing)."""
    return os.environ.get("RLVR_GYM_ALFWORLD_TEST_CACHE") or str(tmp_path_factory.mktemp("alfworld-cache"))


@pytest.fixture(scope="session")
def alfworld_env(alfworld_cache):
    pytest.importorskip("alfworld")
    from rlvr_gym.envs.alfworld.env import ALFWorldEnv

    # size = the generated set, so gymnasium's check_env seeds land on games generated once for the session
    env = ALFWorldEnv(cache_dir=alfworld_cache, max_turns=50, size=6 * GAMES_PER_TYPE)
    yield env
    env.close()


@pytest.fixture(scope="session")
def generated_records(alfworld_env):
    """GAMES_PER_TYPE verified train games per task type (indices cycle through the six types)."""
    return alfworld_env.source.generator.pregenerate(list(range(6 * GAMES_PER_TYPE)))
