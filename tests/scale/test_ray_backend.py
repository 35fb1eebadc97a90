"""The Ray backend on a private one-node Ray (fast enough for the default suite; the 2-node cluster is heavy)."""

from __future__ import annotations

import os
import time

import pytest
from scale_envs import ReadBackPolicy

from rlvr_gym import ErrorKind, Outcome, make
from rlvr_gym.agents.chat import ChatAgent
from rlvr_gym.agents.scripted import OracleAgent, ReplayAgent
from rlvr_gym.rollout import collect_sync


def fingerprint(episode):
    """Everything about an episode that must not depend on where its env ran (timings and pids aside)."""
    return {
        "task_id": episode.task_id,
        "seed": episode.seed,
        "actions": [t.action for t in episode.turns],
        "observations": [[m.model_dump() for m in t.observation] for t in episode.turns],
        "final": [m.model_dump() for m in episode.final_observation or []],
        "verdict": episode.verdict.model_dump() if episode.verdict else None,
        "reward": episode.reward,
        "outcome": episode.outcome,
    }


def half_right_agent(env_id: str, n: int) -> ReplayAgent:
    """Reference solutions for even tasks, a wrong program for odd ones: both verdict kinds are compared."""
    env = make(env_id)
    wrong = "```python\nprint('no idea')\n```"
    return ReplayAgent(
        {env.get_task(i).id: env.get_task(i).reference_actions if i % 2 == 0 else [wrong] for i in range(n)}
    )


def test_ray_runs_match_local_runs_and_a_dead_actor_is_an_infra_error(local_ray, trap_env_id):
    """The one default Ray test: a sandboxed code env gives the same episodes on Ray as locally (right and wrong
    answers), an env actor whose process dies is an infrastructure error with no reward, and policy replicas in
    actors give the same episodes as the policy in this process."""
    from rlvr_gym.scale import RayPolicy, collect_on_ray

    env_id, n = "rlvr/CodeGen-v0", 2
    local = collect_sync(env_id, half_right_agent(env_id, n), tasks=n, concurrency=2, seed=7)
    remote = collect_on_ray(env_id, half_right_agent(env_id, n), tasks=n, concurrency=2, seed=7)
    assert [fingerprint(e) for e in remote] == [fingerprint(e) for e in local]
    assert [e.passed for e in remote] == [True, False]

    ok, dead = collect_on_ray(trap_env_id, OracleAgent(), tasks=2, concurrency=2, env_kwargs={"die_on": (1,)})
    assert ok.passed and ok.turns[0].info["pid"] != os.getpid()
    assert dead.error.kind is ErrorKind.VERIFIER_ERROR and dead.error.exception_type == "RayEnvLost"
    assert dead.outcome is Outcome.ERROR and dead.reward is None  # never a 0

    policy = RayPolicy(ReadBackPolicy, replicas=2)  # policy replicas: same episodes as the policy in this process
    try:
        replicated = collect_on_ray(trap_env_id, ChatAgent(policy), tasks=3, concurrency=3)
    finally:
        policy.kill()
    in_process = collect_sync(trap_env_id, ChatAgent(ReadBackPolicy()), tasks=3, concurrency=3)
    assert [fingerprint(e) for e in replicated] == [fingerprint(e) for e in in_process]
    assert all(e.passed for e in replicated) and {w["pid"] for w in policy.where}.isdisjoint({os.getpid()})


@pytest.mark.heavy
def test_env_failures_on_ray_keep_their_types(local_ray, trap_env_id):
    from rlvr_gym.scale import collect_on_ray

    episodes = collect_on_ray(
        trap_env_id, OracleAgent(), tasks=3, concurrency=3, env_kwargs={"crash_on": (1,), "infra_on": (2,)}
    )
    got = {e.task_index: e for e in episodes}
    assert got[0].passed
    assert got[1].error.kind is ErrorKind.ENV_ERROR and "env exploded" in got[1].error.message
    assert got[2].error.kind is ErrorKind.VERIFIER_ERROR and got[2].reward is None


@pytest.mark.heavy
def test_a_hung_env_actor_is_killed_at_the_step_timeout(local_ray, trap_env_id):
    from rlvr_gym.scale import collect_on_ray

    t0 = time.perf_counter()
    episodes = collect_on_ray(
        trap_env_id, OracleAgent(), tasks=3, concurrency=1, step_timeout_s=1.0, env_kwargs={"hang_on": (1,)}
    )
    got = {e.task_index: e for e in episodes}
    assert got[1].error.kind is ErrorKind.STEP_TIMEOUT and got[1].reward is None
    assert got[0].passed and got[2].passed
    hung_pid, next_pid = got[0].turns[0].info["pid"], got[2].turns[0].info["pid"]
    assert hung_pid != next_pid, "the actor that hung must be replaced, not reused"
    assert _gone(hung_pid), "the hung actor's process must be killed, not left sleeping"
    assert time.perf_counter() - t0 < 20


def _gone(pid: int, wait_s: float = 10.0) -> bool:
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.1)
    return False
