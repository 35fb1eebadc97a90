"""Episodes/s of a sandboxed code env on Ray (1 node, 2 nodes) against the local runner, and the per-call cost.

All in one run, same episodes, same agent (oracle on rlvr/CodeGen-v0: every answer runs its hidden tests in the
sandbox), same concurrency:
- baseline: the local runner, envs in this process (`collect`, isolation "thread");
- Ray, one loopback node with all the cores, then a 2-node loopback cluster (the cores split between the nodes):
  every env instance in a Ray actor placed by `rlvr_gym.scale`.
Each is measured cold (one `collect`, env/actor start-up included) and warm (a second batch on the same runner,
whose env actors are reused: the steady state of a long run);
- per-call overhead: `reset` of a cheap env (rlvr/MathArithmetic-v0) through a Ray actor against the same call on
  an in-process env, and Ray's floor (an empty actor method), mean over `--calls`.
Every run must give the same verdicts; the benchmark fails otherwise. Both "nodes" share this machine, so on a small
machine 2 nodes cannot beat 1: the figure shows what spreading costs; the gain needs real machines.
Prints a table, the ratios, then one JSON line.

    python benchmarks/ray_scale.py [--episodes 48] [--concurrency 4] [--calls 300] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from typing import Any

from rlvr_gym.agents.scripted import OracleAgent
from rlvr_gym.env_handles import EnvRecipe, LocalEnv
from rlvr_gym.rollout import Runner, plan_episodes
from rlvr_gym.scale import LoopbackCluster, RayEnv, connect, ray_collect_options

CHEAP_ENV = "rlvr/MathArithmetic-v0"


def cold_and_warm(env_id: str, episodes: int, concurrency: int, options: dict[str, Any]) -> tuple[float, float, list]:
    """Episodes/s of a first batch (envs start) and of a second batch on the same runner (envs reused)."""
    specs = plan_episodes(env_id, episodes, 1, 0)
    runner = Runner(env_id, OracleAgent(), concurrency=concurrency, **options)

    async def both() -> tuple[float, float, list]:
        t0 = time.perf_counter()
        first = await runner.run(specs)
        t1 = time.perf_counter()
        second = await runner.run(specs)
        t2 = time.perf_counter()
        require_same(verdicts(first), verdicts(second), "a second run on the same runner")
        return episodes / (t1 - t0), episodes / (t2 - t1), second

    try:
        return asyncio.run(both())
    finally:
        runner.close()


def verdicts(episodes: list) -> list:
    return [(e.episode_id, e.verdict.model_dump() if e.verdict else None, e.error) for e in episodes]


def require_same(expected: list, got: list, what: str) -> None:
    """Stop the benchmark, showing the first difference, when `what` did not reproduce the expected verdicts."""
    for want, have in zip(expected, got, strict=True):
        if want != have:
            raise SystemExit(f"{what} gave a different verdict for {want[0]}:\n  expected {want}\n  got      {have}")


def call_ms(handle, calls: int) -> float:
    handle.reset(0, {"task_index": 0})  # warm: first reset builds caches
    t0 = time.perf_counter()
    for i in range(calls):
        handle.reset(i, {"task_index": i})
    return (time.perf_counter() - t0) / calls * 1000


def on_cluster(nodes: int, cpus: int, args, expected: list) -> tuple[float, float, tuple[float, float] | None]:
    """Cold and warm episodes/s of the code env on a fresh loopback cluster (and the per-call cost on one node)."""
    with LoopbackCluster(nodes=nodes, cpus_per_node=cpus // nodes) as cluster, connect(cluster.address):
        cold, warm, episodes = cold_and_warm(args.env, args.episodes, args.concurrency, ray_collect_options(args.env))
        require_same(expected, verdicts(episodes), f"the {nodes}-node Ray run")
        per_call = None
        if nodes == 1:
            remote = LocalEnv(RayEnv(EnvRecipe.from_registry(CHEAP_ENV, {})))
            per_call = (call_ms(remote, args.calls), noop_ms(args.calls))
            remote.close()
    return cold, warm, per_call


def noop_ms(calls: int) -> float:
    """Ray's own floor: the round trip of an actor method that does nothing."""
    import ray

    echo = ray.remote(num_cpus=0)(Echo).remote()
    ray.get(echo.back.remote(None))
    t0 = time.perf_counter()
    for _ in range(calls):
        ray.get(echo.back.remote(None))
    elapsed = (time.perf_counter() - t0) / calls * 1000
    ray.kill(echo)
    return elapsed


class Echo:
    def back(self, value: Any) -> Any:
        return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default="rlvr/CodeGen-v0")
    parser.add_argument("--episodes", type=int, default=48)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--cpus", type=int, default=max(2, os.cpu_count() or 2), help="Ray CPUs, split over nodes")
    parser.add_argument("--quick", action="store_true", help="12 episodes, 100 calls")
    args = parser.parse_args()
    if args.quick:
        args.episodes, args.calls = 12, 100
    load_before = os.getloadavg()[0]

    local_cold, local_warm, local_episodes = cold_and_warm(args.env, args.episodes, args.concurrency, {})
    if not all(e.passed for e in local_episodes):
        raise SystemExit("the oracle must pass every task of the local run")
    expected = verdicts(local_episodes)
    local_call = call_ms(LocalEnv(EnvRecipe.from_registry(CHEAP_ENV, {})()), args.calls)
    one_cold, one_warm, ray_call = on_cluster(1, args.cpus, args, expected)
    two_cold, two_warm, _ = on_cluster(2, args.cpus, args, expected)
    assert ray_call is not None

    print(f"{args.env}, {args.episodes} oracle episodes, concurrency {args.concurrency}, {os.cpu_count()} cores")
    print("episodes/s                cold     warm   warm ratio vs local")
    print(f"local runner (baseline): {local_cold:6.2f}   {local_warm:6.2f}")
    print(f"Ray, 1 node:             {one_cold:6.2f}   {one_warm:6.2f}   {one_warm / local_warm:.2f}")
    print(f"Ray, 2 nodes:            {two_cold:6.2f}   {two_warm:6.2f}   {two_warm / local_warm:.2f}")
    print(f"2 nodes / 1 node (warm): {two_warm / one_warm:.2f}")
    print(
        f"per call ({CHEAP_ENV} reset): local {local_call:.3f} ms, Ray actor {ray_call[0]:.3f} ms"
        f" (an empty actor call: {ray_call[1]:.3f} ms)"
    )
    record = {
        "benchmark": "ray_scale",
        "env": args.env,
        "episodes": args.episodes,
        "concurrency": args.concurrency,
        "cores": os.cpu_count(),
        "load_avg_before": round(load_before, 2),
        "load_avg_after": round(os.getloadavg()[0], 2),
        "local_cold_eps": round(local_cold, 3),
        "local_warm_eps": round(local_warm, 3),
        "ray_1node_cold_eps": round(one_cold, 3),
        "ray_1node_warm_eps": round(one_warm, 3),
        "ray_2node_cold_eps": round(two_cold, 3),
        "ray_2node_warm_eps": round(two_warm, 3),
        "ratio_1node_vs_local_warm": round(one_warm / local_warm, 3),
        "ratio_2node_vs_local_warm": round(two_warm / local_warm, 3),
        "ratio_2node_vs_1node_warm": round(two_warm / one_warm, 3),
        "local_call_ms": round(local_call, 4),
        "ray_call_ms": round(ray_call[0], 4),
        "ray_noop_call_ms": round(ray_call[1], 4),
        "identical_verdicts": True,
    }
    print(json.dumps(record))


if __name__ == "__main__":
    main()
