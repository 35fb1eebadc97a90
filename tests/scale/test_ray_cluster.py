"""The Ray backend on a real 2-node Ray cluster on loopback (heavy: two nodes take ~30 s to start here)."""

from __future__ import annotations

import functools
import threading
import time

import pytest
from conftest import ship_test_envs_by_value, skip_without_ray
from scale_envs import ReadBackPolicy
from test_ray_backend import fingerprint, half_right_agent

from rlvr_gym import ErrorKind
from rlvr_gym.agents.chat import ChatAgent
from rlvr_gym.agents.scripted import OracleAgent
from rlvr_gym.rollout import collect_sync

pytestmark = pytest.mark.heavy


@pytest.fixture(scope="module")
def cluster():
    skip_without_ray()
    from rlvr_gym.scale import LoopbackCluster, connect

    with LoopbackCluster(nodes=2, cpus_per_node=1) as two_nodes, connect(two_nodes.address):
        ship_test_envs_by_value()
        yield two_nodes


def test_the_cluster_has_two_loopback_nodes(cluster):
    import ray

    nodes = [n for n in ray.nodes() if n["Alive"]]
    assert len(nodes) == 2
    assert {n["NodeManagerAddress"] for n in nodes} == {"127.0.0.1"}


def test_results_on_two_nodes_equal_the_local_run(cluster, trap_env_id):
    from rlvr_gym.scale import collect_on_ray

    env_id, n = "rlvr/CodeGen-v0", 6
    local = collect_sync(env_id, half_right_agent(env_id, n), tasks=n, group_size=2, concurrency=4, seed=3)
    remote = collect_on_ray(env_id, half_right_agent(env_id, n), tasks=n, group_size=2, concurrency=4, seed=3)
    assert [fingerprint(e) for e in remote] == [fingerprint(e) for e in local]
    assert sum(e.passed for e in remote) == n  # the even tasks, twice each

    spread = collect_on_ray(trap_env_id, OracleAgent(), tasks=8, concurrency=4)
    assert all(e.passed for e in spread)
    assert len({t.info["node"] for e in spread for t in e.turns}) == 2, "env actors must run on both nodes"


def test_policy_replicas_spread_over_the_nodes_and_a_lost_one_is_a_policy_error(cluster, trap_env_id):
    from rlvr_gym.scale import RayPolicy, collect_on_ray

    policy = RayPolicy(functools.partial(ReadBackPolicy, die_on=2), replicas=2)
    try:
        assert len({w["node_id"] for w in policy.where}) == 2, "one replica per node"
        episodes = collect_on_ray(trap_env_id, ChatAgent(policy), tasks=4, concurrency=1)
    finally:
        policy.kill()
    got = {e.task_index: e for e in episodes}
    assert got[2].error.kind is ErrorKind.POLICY_ERROR and got[2].reward is None
    assert got[0].passed and got[1].passed and got[3].passed, "the surviving replica serves the rest"


def test_a_node_lost_mid_episode_is_an_infra_error_and_the_run_goes_on(cluster, trap_env_id):
    from rlvr_gym.scale import Placement, collect_on_ray

    pinned = Placement(resources={"node1": 0.01})  # every env actor of this run on the worker node
    killer = threading.Timer(8.0, cluster.kill_node, args=(1,))
    killer.start()
    t0 = time.perf_counter()
    try:
        episodes = collect_on_ray(
            trap_env_id,
            OracleAgent(),
            tasks=2,
            concurrency=2,
            placement=pinned,
            env_kwargs={"hang_on": (0, 1), "hang_s": 60.0},
        )
    finally:
        killer.join()
    assert all(e.error is not None and e.error.kind is ErrorKind.VERIFIER_ERROR for e in episodes), [
        e.error for e in episodes
    ]
    assert all(e.error.exception_type == "RayEnvLost" and e.reward is None for e in episodes)
    assert time.perf_counter() - t0 < 45, "a lost node must fail its episodes promptly, not at the env's timeout"

    _wait_until_alive_nodes(1)  # once the cluster knows the node is gone, runs go on on the other one
    after = collect_on_ray(trap_env_id, OracleAgent(), tasks=2, concurrency=2)
    assert all(e.passed for e in after), [e.error for e in after]


def _wait_until_alive_nodes(count: int, wait_s: float = 90.0) -> None:
    import ray

    deadline = time.monotonic() + wait_s
    while sum(n["Alive"] for n in ray.nodes()) != count:
        assert time.monotonic() < deadline, "the cluster never noticed the lost node"
        time.sleep(0.5)
