import asyncio
import json

import pytest

from rlvr_gym import Agent, AgentStep, ErrorKind, PolicyError
from rlvr_gym.agents.scripted import ConstantAgent, OracleAgent
from rlvr_gym.rollout import collect, collect_sync


class CountingOracle(OracleAgent):
    def __init__(self):
        self.calls = 0
        self.seeds = []

    def start(self, task, *, seed=None, sample_index=0, reference=None):
        self.seeds.append(seed)
        return super().start(task, seed=seed, sample_index=sample_index, reference=reference)

    async def act(self, ctx, observation):
        self.calls += 1
        return await super().act(ctx, observation)


class SleepyAgent(Agent):
    async def act(self, ctx, observation):
        await asyncio.sleep(5)
        return AgentStep(text="")


class BrokenEndpointAgent(Agent):
    async def act(self, ctx, observation):
        raise PolicyError("HTTP 503 after 3 retries")


class BuggyAgent(Agent):
    async def act(self, ctx, observation):
        raise ZeroDivisionError("agent bug")


def test_oracle_groups_and_seeds(echo_env_id):
    agent = CountingOracle()
    episodes = collect_sync(echo_env_id, agent, tasks=10, group_size=3, concurrency=4, seed=1)
    assert len(episodes) == 30 and all(e.passed for e in episodes)
    assert len({e.group_id for e in episodes}) == 10
    assert all(len({e.seed for e in episodes if e.group_id == g}) == 3 for g in {e.group_id for e in episodes})
    assert sorted(agent.seeds) == sorted(e.seed for e in episodes)  # the seed reaches the agent
    again = collect_sync(echo_env_id, OracleAgent(), tasks=10, group_size=3, seed=1)
    assert [e.seed for e in again] == [e.seed for e in episodes]
    assert [e.seed for e in collect_sync(echo_env_id, OracleAgent(), tasks=10, group_size=3, seed=2)] != [
        e.seed for e in episodes]


def test_wrong_agent_scores_zero(echo_env_id):
    episodes = collect_sync(echo_env_id, ConstantAgent("nope"), tasks=5, env_kwargs={"max_attempts": 2})
    assert all(e.reward == 0.0 and not e.passed and len(e.turns) == 2 for e in episodes)


def test_failures_are_recorded_and_do_not_stop_the_run(echo_env_id):
    episodes = collect_sync(echo_env_id, OracleAgent(), tasks=6, env_kwargs={"crash_on": (2,), "hang_on": (4,)},
                            step_timeout_s=0.3)
    kinds = {e.task_index: (e.error.kind if e.error else None) for e in episodes}
    assert kinds[2] is ErrorKind.ENV_ERROR and kinds[4] is ErrorKind.STEP_TIMEOUT
    assert all(kinds[i] is None and e.passed for i, e in zip(range(6), episodes, strict=True) if i not in (2, 4))
    assert "env exploded" in episodes[2].error.message


@pytest.mark.parametrize(
    "agent,kind",
    [(SleepyAgent(), ErrorKind.EPISODE_TIMEOUT), (BrokenEndpointAgent(), ErrorKind.POLICY_ERROR),
     (BuggyAgent(), ErrorKind.AGENT_ERROR)],
)
def test_agent_side_failures_are_typed(echo_env_id, agent, kind):
    episodes = collect_sync(echo_env_id, agent, tasks=2, episode_timeout_s=0.3)
    assert [e.error.kind for e in episodes] == [kind, kind]


def test_stream_and_resume_without_redo_or_loss(echo_env_id, tmp_path):
    out = tmp_path / "episodes.jsonl"
    collect_sync(echo_env_id, OracleAgent(), tasks=8, group_size=2, output=out)
    lines = out.read_text().splitlines()
    assert len(lines) == 16
    # simulate a kill: 5 complete lines and a torn sixth
    out.write_text("\n".join(lines[:5]) + "\n" + lines[5][: len(lines[5]) // 2])
    agent = CountingOracle()
    episodes = collect_sync(echo_env_id, agent, tasks=8, group_size=2, output=out, resume=True)
    assert agent.calls == 11  # only the missing episodes ran
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    ids = [r["episode_id"] for r in rows]
    assert len(ids) == 16 == len(set(ids)) and len(episodes) == 16
    # resuming a complete file runs nothing
    agent = CountingOracle()
    collect_sync(echo_env_id, agent, tasks=8, group_size=2, output=out, resume=True)
    assert agent.calls == 0 and len(out.read_text().splitlines()) == 16


async def test_collect_is_async_and_concurrent(echo_env_id):
    episodes = await collect(echo_env_id, OracleAgent(), tasks=[3, 5], group_size=2, concurrency=2)
    assert [e.task_index for e in episodes] == [3, 3, 5, 5]
