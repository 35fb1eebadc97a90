"""Hung, crashing and interpreter-hogging envs cost one episode, never the run (issue #14 items 2, 3, 6)."""

import os
import time

from rlvr_gym import ErrorKind, Outcome
from rlvr_gym.agents.scripted import OracleAgent
from rlvr_gym.rollout import collect_sync


def by_index(episodes):
    return {e.task_index: e for e in episodes}


def test_gil_hog_is_stopped_in_process_isolation(trap_env_ids):
    t0 = time.perf_counter()
    episodes = collect_sync(
        trap_env_ids["trap"],
        OracleAgent(),
        tasks=4,
        concurrency=2,
        isolation="process",
        step_timeout_s=1.0,
        env_kwargs={"hog_on": (1,)},
    )
    wall = time.perf_counter() - t0
    got = by_index(episodes)
    assert got[1].error.kind is ErrorKind.STEP_TIMEOUT and got[1].reward is None
    assert all(got[i].passed for i in (0, 2, 3))
    assert all(t.info["pid"] != os.getpid() for e in episodes if e.turns for t in e.turns)
    assert wall < 20, f"a hung env must cost one episode's timeout, the run took {wall:.1f}s"


def test_env_declared_process_isolation(trap_env_ids):
    episodes = collect_sync(trap_env_ids["process"], OracleAgent(), tasks=3, concurrency=2)
    assert all(e.passed for e in episodes)
    assert {t.info["pid"] for e in episodes for t in e.turns}.isdisjoint({os.getpid()})


def test_auto_isolation_moves_to_processes_after_a_timeout(trap_env_ids):
    episodes = collect_sync(
        trap_env_ids["trap"],
        OracleAgent(),
        tasks=5,
        concurrency=1,
        isolation="auto",
        step_timeout_s=0.3,
        env_kwargs={"hang_on": (0,)},
    )
    got = by_index(episodes)
    assert got[0].error.kind is ErrorKind.STEP_TIMEOUT
    assert all(got[i].passed for i in range(1, 5))
    assert all(t.info["pid"] != os.getpid() for i in range(1, 5) for t in got[i].turns)


def test_hung_worker_threads_are_replaced(trap_env_ids):
    hung = tuple(range(8))  # more hung calls than the pool has spare threads
    t0 = time.perf_counter()
    episodes = collect_sync(
        trap_env_ids["trap"],
        OracleAgent(),
        tasks=12,
        concurrency=1,
        step_timeout_s=0.2,
        episode_timeout_s=3.0,
        env_kwargs={"hang_on": hung, "hang_s": 30.0},
    )
    got = by_index(episodes)
    assert all(got[i].error.kind is ErrorKind.STEP_TIMEOUT for i in hung)
    assert all(got[i].passed for i in range(8, 12)), [got[i].error for i in range(8, 12)]
    assert time.perf_counter() - t0 < 15


def test_a_dying_env_process_costs_one_episode(trap_env_ids):
    episodes = collect_sync(
        trap_env_ids["trap"], OracleAgent(), tasks=4, concurrency=2, isolation="process", env_kwargs={"die_on": (2,)}
    )
    got = by_index(episodes)
    assert got[2].error.kind is ErrorKind.ENV_ERROR and "exit" in got[2].error.message
    assert all(got[i].passed for i in (0, 1, 3))


def test_infra_error_is_an_error_not_a_zero(trap_env_ids):
    for isolation in ("thread", "process"):
        episodes = collect_sync(
            trap_env_ids["trap"], OracleAgent(), tasks=3, isolation=isolation, env_kwargs={"infra_on": (1,)}
        )
        got = by_index(episodes)
        assert got[1].error.kind is ErrorKind.VERIFIER_ERROR, isolation
        assert got[1].outcome is Outcome.ERROR and got[1].reward is None
        assert got[1].error.exception_type == "InfraError" and "sandbox unreachable" in got[1].error.message
        assert got[0].outcome is Outcome.SCORED and got[0].reward == 1.0


def test_env_declared_timeouts_hold_and_flags_override_them(trap_env_ids):
    env_id = trap_env_ids["strict"]
    episodes = collect_sync(
        env_id, OracleAgent(), tasks=3, env_kwargs={"hang_on": (0,), "reset_hang_on": (1,), "hang_s": 1.0}
    )
    got = by_index(episodes)
    assert got[0].error.kind is ErrorKind.STEP_TIMEOUT  # step_timeout_s = 0.3 declared by the env
    assert got[1].error.kind is ErrorKind.STEP_TIMEOUT and got[1].error.message.startswith("reset")
    assert got[2].passed
    # the caller's limits win over the env's own
    episodes = collect_sync(
        env_id,
        OracleAgent(),
        tasks=2,
        step_timeout_s=5,
        reset_timeout_s=5,
        episode_timeout_s=10,
        env_kwargs={"hang_on": (0,), "reset_hang_on": (1,), "hang_s": 1.0},
    )
    assert all(e.passed for e in episodes)


def test_env_declared_episode_timeout(trap_env_ids):
    class SlowOracle(OracleAgent):
        async def act(self, ctx, observation):
            import asyncio

            await asyncio.sleep(3)
            return await super().act(ctx, observation)

    episodes = collect_sync(trap_env_ids["strict"], SlowOracle(), tasks=1)
    assert episodes[0].error.kind is ErrorKind.EPISODE_TIMEOUT  # episode_timeout_s = 1.5 declared by the env
