"""Shared ALFWorld fixtures: one generated game set per test session, in a session-private cache dir."""

from __future__ import annotations

import pytest

GAMES_PER_TYPE = 10


@pytest.fixture(scope="session")
def alfworld_cache(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("alfworld-cache"))


@pytest.fixture(scope="session")
def alfworld_env(alfworld_cache):
    pytest.importorskip("alfworld")
    from rlvr_gym.envs.alfworld.env import ALFWorldEnv

    # size = the generated set, so check_env's seeds land on games generated once for the session
    env = ALFWorldEnv(cache_dir=alfworld_cache, max_turns=50, size=6 * GAMES_PER_TYPE)
    yield env
    env.close()


@pytest.fixture(scope="session")
def generated_records(alfworld_env):
    """10 verified games per task type (indices 0..59 cycle through the six types)."""
    return alfworld_env.generator.pregenerate(list(range(6 * GAMES_PER_TYPE)))
