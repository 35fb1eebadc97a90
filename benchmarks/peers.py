"""rlvr-gym side by side with its peers, in one process run, on the same tasks.

Single-turn: the same N arithmetic items (reasoning-gym's `basic_arithmetic`, seed 0) are played with the right
answer in each framework's own answer format and scored by each framework's own verifier:
- reasoning-gym: `dataset[i]` + `dataset.score_answer` (generator + scorer, no env);
- SkyRL-Gym: `GSM8kEnv(extras=reward_spec)` `init` + `step` (its bare step loop);
- GEM: `ReasoningGymEnv` `reset` + `step`;
- rlvr-gym: the plain Gymnasium loop (`reset` + `step`) over `rlvr/MathDataset-v0` holding the same items, and
  the rollout runner (`collect` with the scripted oracle agent) at concurrency 1 and 64.
Multi-turn: Sokoban text envs (GEM's `game:Sokoban-v0-easy` vs `rlvr/Sokoban-v0`), fixed move script per episode.

Peers come from the `bench` extra; nothing is installed at run time. Prints a table of rates and ratios against
rlvr-gym's plain loop, then one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
import tracemalloc
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import rlvr_gym
from rlvr_gym.agents.scripted import OracleAgent
from rlvr_gym.rollout import collect

MOVES = ("up", "left", "down", "right")


def timed(fn: Callable[[], int]) -> tuple[float, int]:
    t0 = time.perf_counter()
    count = fn()
    return time.perf_counter() - t0, count


def reasoning_gym_items(n: int) -> tuple[Any, list[dict[str, Any]]]:
    import reasoning_gym

    dataset = reasoning_gym.create_dataset("basic_arithmetic", size=n, seed=0)
    return dataset, [dataset[i] for i in range(n)]


def run_reasoning_gym(n: int) -> int:
    import reasoning_gym

    dataset = reasoning_gym.create_dataset("basic_arithmetic", size=n, seed=0)
    total = 0.0
    for i in range(n):
        entry = dataset[i]
        total += dataset.score_answer(entry["answer"], entry)
    assert total == n, total
    return n


def run_skyrl(items: list[dict[str, Any]]) -> int:
    from skyrl_gym.envs.gsm8k.env import GSM8kEnv

    total = 0.0
    for item in items:
        env = GSM8kEnv(extras={"reward_spec": {"ground_truth": str(item["answer"])}})
        env.init([{"role": "user", "content": item["question"]}])
        total += env.step(f"#### {item['answer']}")["reward"]
    assert total == len(items), total
    return len(items)


def run_gem(n: int) -> int:
    from gem.envs.reasoning_gym import ReasoningGymEnv

    env = ReasoningGymEnv("basic_arithmetic", size=n, seed=0)
    total = 0.0
    for _ in range(n):
        env.reset()
        total += float(env.step(f"\\boxed{{{env.data['answer']}}}")[1])
    assert total == n, total
    return n


def write_items(items: list[dict[str, Any]], path: Path) -> None:
    with path.open("w") as f:
        for item in items:
            f.write(json.dumps({"question": item["question"], "answer": str(item["answer"])}) + "\n")


def run_rlvr_plain(data: Path, n: int) -> int:
    env = rlvr_gym.make("rlvr/MathDataset-v0", data_files=str(data))
    total = 0.0
    for i in range(n):  # the loader drops repeated questions, so a few items come round twice
        env.reset(options={"task_index": i % env.num_tasks})
        total += env.step(env.task.reference_actions[0])[1]
    assert total == n, total
    return n


def run_rlvr_runner(data: Path, n: int, concurrency: int) -> int:
    size = rlvr_gym.make("rlvr/MathDataset-v0", data_files=str(data)).num_tasks
    tasks = list(range(size)) + list(range(n - size))
    episodes = asyncio.run(
        collect(
            "rlvr/MathDataset-v0",
            OracleAgent(),
            tasks=tasks,
            concurrency=concurrency,
            env_kwargs={"data_files": str(data)},
            seed=len(tasks),
        )
    )
    failed = [e for e in episodes if not e.passed]
    if failed:  # an oracle fails only through infrastructure (e.g. a timeout on an overloaded machine): say which
        kinds = Counter(e.error.type if e.error else "not passed" for e in failed)
        raise RuntimeError(
            f"runner c={concurrency}: {len(failed)}/{n} oracle episodes failed: {dict(kinds)}; "
            f"first: {failed[0].error.message[:300] if failed[0].error else failed[0].reward}"
        )
    return n


def run_gem_sokoban(episodes: int, steps: int) -> int:
    import gem

    env = gem.make("game:Sokoban-v0-easy")
    for e in range(episodes):
        env.reset(seed=e)
        for k in range(steps):
            *_, terminated, truncated, _ = env.step(f"\\boxed{{{MOVES[k % 4]}}}")
            if terminated or truncated:
                env.reset(seed=e)
    return episodes * steps


def run_rlvr_sokoban(episodes: int, steps: int) -> int:
    env = rlvr_gym.make("rlvr/Sokoban-v0", max_turns=steps + 1)
    for e in range(episodes):
        env.reset(options={"task_index": e})
        for k in range(steps):
            *_, terminated, truncated, _ = env.step(MOVES[k % 4])
            if terminated or truncated:
                env.reset(options={"task_index": e})
    return episodes * steps


def memory_per_episode(data: Path, n: int) -> float:
    """Peak traced bytes per episode held by the runner (episodes are kept in memory by `collect`)."""
    tracemalloc.start()
    run_rlvr_runner(data, n, 64)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=5000)
    parser.add_argument("--sokoban-episodes", type=int, default=100)
    parser.add_argument("--sokoban-steps", type=int, default=20)
    args = parser.parse_args()
    n = args.episodes
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    _, items = reasoning_gym_items(n)
    rows: dict[str, tuple[float, int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "items.jsonl"
        write_items(items, data)
        run_rlvr_plain(data, min(n, 200))  # warm caches and imports for every contender alike
        run_skyrl(items[:200])
        run_gem(200)
        rows["reasoning-gym generator+scorer"] = timed(lambda: run_reasoning_gym(n))
        rows["SkyRL-Gym step loop"] = timed(lambda: run_skyrl(items))
        rows["GEM env loop"] = timed(lambda: run_gem(n))
        rows["rlvr-gym plain env loop"] = timed(lambda: run_rlvr_plain(data, n))
        rows["rlvr-gym runner c=1"] = timed(lambda: run_rlvr_runner(data, n, 1))
        rows["rlvr-gym runner c=64"] = timed(lambda: run_rlvr_runner(data, n, 64))
        rows["rlvr-gym runner c=512"] = timed(lambda: run_rlvr_runner(data, n, 512))
        mem = memory_per_episode(data, min(n, 2000))
        multi = {
            "GEM Sokoban steps": timed(lambda: run_gem_sokoban(args.sokoban_episodes, args.sokoban_steps)),
            "rlvr-gym Sokoban steps": timed(lambda: run_rlvr_sokoban(args.sokoban_episodes, args.sokoban_steps)),
        }

    rates = {name: count / seconds for name, (seconds, count) in rows.items()}
    base = rates["rlvr-gym plain env loop"]
    runner_overhead_us = (rows["rlvr-gym runner c=1"][0] - rows["rlvr-gym plain env loop"][0]) / n * 1e6
    load = os.getloadavg()[0]
    print(f"single-turn arithmetic, {n} episodes each (load average {load:.1f})")
    print(f"{'contender':36s} {'episodes/s':>12s} {'vs rlvr plain':>14s}")
    for name, rate in rates.items():
        print(f"{name:36s} {rate:12.0f} {rate / base:13.2f}x")
    print(f"runner overhead at c=1: {runner_overhead_us:.0f} us/episode; memory {mem / 1024:.1f} KiB/episode (traced)")
    multi_rates = {name: count / seconds for name, (seconds, count) in multi.items()}
    print(f"multi-turn Sokoban text, {args.sokoban_episodes} x {args.sokoban_steps} steps")
    for name, rate in multi_rates.items():
        print(f"{name:36s} {rate:12.0f} steps/s")
    print(
        json.dumps(
            {
                "benchmark": "peers",
                "episodes": n,
                "load_avg": load,
                "episodes_per_s": rates,
                "ratio_vs_rlvr_plain": {k: v / base for k, v in rates.items()},
                "runner_overhead_us_c1": runner_overhead_us,
                "runner_bytes_per_episode": mem,
                "sokoban_steps_per_s": multi_rates,
                "sokoban_ratio_rlvr_vs_gem": multi_rates["rlvr-gym Sokoban steps"] / multi_rates["GEM Sokoban steps"],
            }
        )
    )


if __name__ == "__main__":
    main()
