"""`isolation="inline"`: env calls on the runner's event loop (no thread hand-off), same episodes as in threads; a
call that overruns its limit fails its episode as a timeout and moves the rest of the run to threads."""

from __future__ import annotations

import asyncio

from rlvr_gym.agents.scripted import OracleAgent
from rlvr_gym.rollout import Runner, collect, plan_episodes
from rlvr_gym.types import ErrorKind


def _summary(episodes):
    return [(e.episode_id, e.reward, e.error.kind if e.error else None, len(e.turns)) for e in episodes]


async def test_inline_gives_the_episodes_threads_give(echo_env_id):
    kwargs = {"tasks": 12, "group_size": 2, "concurrency": 4, "env_kwargs": {"crash_on": (3,), "max_attempts": 2}}
    inline = await collect(echo_env_id, OracleAgent(), isolation="inline", **kwargs)
    thread = await collect(echo_env_id, OracleAgent(), isolation="thread", **kwargs)
    assert _summary(inline) == _summary(thread)
    assert [e.error.kind for e in inline if e.error] == [ErrorKind.ENV_ERROR] * 2  # task 3 crashes, the run goes on


async def test_an_overrun_fails_its_episode_and_moves_the_run_to_threads(echo_env_id):
    runner = Runner(
        echo_env_id,
        OracleAgent(),
        concurrency=1,
        env_kwargs={"hang_on": (1,), "hang_s": 0.3},
        step_timeout_s=0.1,
        isolation="inline",
    )
    try:
        assert runner.isolation == "inline"
        episodes = await runner.run(plan_episodes(echo_env_id, 4, 1, 0))
    finally:
        runner.close()
    kinds = [e.error.kind if e.error else None for e in episodes]
    assert kinds == [None, ErrorKind.STEP_TIMEOUT, None, None]
    assert runner.isolation == "thread"
    assert all(e.passed for i, e in enumerate(episodes) if i != 1)


class SlowOracle(OracleAgent):
    """The oracle after a policy-like wait: each episode keeps its env while it waits."""

    async def act(self, ctx, observation):
        await asyncio.sleep(0.05)
        return await super().act(ctx, observation)


async def _pool_size(env_id: str, agent, concurrency: int, episodes: int) -> int:
    runner = Runner(env_id, agent, concurrency=concurrency, isolation="inline")
    try:
        done = await runner.run(plan_episodes(env_id, episodes, 1, 0))
        assert all(e.passed for e in done)
        return len(runner.pool.live)
    finally:
        runner.close()


async def test_the_pool_builds_what_the_episodes_hold(echo_env_id):
    # Fast episodes keep an env for microseconds: a few envs serve 64 waiters (Little's law caps the builds) ...
    assert await _pool_size(echo_env_id, OracleAgent(), 64, 1500) <= 8
    # ... while episodes that wait on their agent still get one env each.
    assert await _pool_size(echo_env_id, SlowOracle(), 16, 48) == 16
