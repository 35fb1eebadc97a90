"""Ray fixtures: a private one-node Ray on loopback for the default suite (one per session, it takes ~10 s)."""

from __future__ import annotations

import importlib.util

import pytest
from scale_envs import ScaleTrapEnv

import rlvr_gym

TRAP_ID = "rlvr/ScaleTrap-v0"


@pytest.fixture(scope="session", autouse=True)
def trap_env_id() -> str:
    rlvr_gym.register(TRAP_ID, ScaleTrapEnv, family="test", description="Ray backend test env")
    return TRAP_ID


def skip_without_ray() -> None:
    """Skip when Ray is absent, without importing it (Ray must be imported after rlvr_gym.scale sets its auth)."""
    if importlib.util.find_spec("ray") is None:
        pytest.skip("ray is not installed (pip install 'rlvr-gym[ray]')")


def ship_test_envs_by_value() -> None:
    """Ray workers cannot import this tests folder: send the test env's class by value instead."""
    import ray
    import scale_envs

    ray.cloudpickle.register_pickle_by_value(scale_envs)


@pytest.fixture(scope="module")
def local_ray():
    skip_without_ray()
    from rlvr_gym.scale import connect

    with connect(num_cpus=2) as session:
        ship_test_envs_by_value()
        yield session
