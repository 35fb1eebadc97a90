"""What an episode costs: the plain Gymnasium loop per family, the math verifier's fast path against its full rule,
and the rollout runner on top of the plain loop (issue #37, points 2 and 3).

Every contender plays the oracle (each task's reference actions) on pre-built tasks: the env is warmed on the same
task indices first, so task generation is not timed (peers.py times generation apart). Contenders run in rounds,
interleaved (each round runs every contender once, in a rotated order), and each figure is the median over rounds
of microseconds per episode, with the min-max spread; every ratio is between two medians of the same run, because
on a shared machine only such ratios mean anything. Prints a table, then one JSON line.

- `math plain loop`: `reset(task_index)` + `step(reference)` on `rlvr/MathArithmetic-v0` (exact integer answers);
  `... full rule`: the same with the fast path switched off (the verifier before #37), in the same rounds;
- `math verify`: the verifier alone on the same (task, reply) pairs, fast path on and off;
- `<family> plain loop`: reset + every reference action until the episode ends (code runs in the sandbox);
- `runner c=N`: `collect` with the scripted oracle over the same math tasks, N episodes in flight, no output file,
  env calls inline as the math env declares; `..., threads`: the same with every env call in a worker thread;
  `..., process` (with `--isolation process`): in child processes (killable on a timeout).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.metadata
import json
import os
import platform
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

import rlvr_gym
from rlvr_gym.agents.scripted import OracleAgent
from rlvr_gym.envs.math import verifier
from rlvr_gym.rollout import collect

MATH_ENV = "rlvr/MathArithmetic-v0"
FAMILIES = {  # family -> (env id, episodes per round): one multi-turn or sandboxed env per family
    "code": ("rlvr/CodeGen-v0", 20),
    "tools": ("rlvr/ToolDepth-v0", 400),
    "puzzles (Sokoban)": ("rlvr/Sokoban-v0", 400),
    "puzzles (Maze)": ("rlvr/Maze-v0", 400),
}


# ---- shared by the benchmarks of #37 (peers.py imports these) -------------------------------------------------------
@dataclass(frozen=True)
class Stat:
    """Microseconds per episode over the rounds of one contender: wall time, and this process's CPU time (all its
    threads), which other processes on a loaded machine inflate less."""

    median_us: float
    min_us: float
    max_us: float
    episodes: int
    cpu_median_us: float

    @property
    def rate(self) -> float:
        return 1e6 / self.median_us


def interleaved(contenders: dict[str, Callable[[], int | tuple[float, int]]], rounds: int) -> dict[str, Stat]:
    """Run each contender once per round, rotating the order every round. A contender returns its episode count
    (its wall time is measured here) or (seconds, count) when it times only part of its work itself."""
    names = list(contenders)
    samples: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}
    counts: dict[str, int] = {}
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            t0, c0 = time.perf_counter(), time.process_time()
            result = contenders[name]()
            cpu_s = time.process_time() - c0
            seconds, counts[name] = result if isinstance(result, tuple) else (time.perf_counter() - t0, result)
            samples[name].append(seconds / counts[name] * 1e6)
            cpu[name].append(cpu_s / counts[name] * 1e6)
    return {
        name: Stat(statistics.median(values), min(values), max(values), counts[name], statistics.median(cpu[name]))
        for name, values in samples.items()
    }


def versions(*distributions: str) -> dict[str, str]:
    found = {}
    for name in distributions:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = "not installed"
    return found


def host() -> dict[str, Any]:
    """The machine the figures come from (the load average says how shared it was)."""
    return {
        "cpus": os.cpu_count(),
        "load_avg_1m": round(os.getloadavg()[0], 2),
        "python": platform.python_version(),
        "machine": platform.machine(),
    }


def print_table(title: str, stats: dict[str, Stat], base: str) -> None:
    print(f"\n{title} (median over rounds, min-max; ratio = median / median of {base!r})")
    print(f"{'contender':40s} {'us/episode':>10s} {'spread':>17s} {'episodes/s':>10s} {'ratio':>6s} {'CPU us':>8s}")
    for name, stat in stats.items():
        spread = f"{stat.min_us:.1f}-{stat.max_us:.1f}"
        ratio = stat.median_us / stats[base].median_us
        print(
            f"{name:40s} {stat.median_us:10.1f} {spread:>17s} {stat.rate:10.0f} {ratio:6.2f} {stat.cpu_median_us:8.1f}"
        )


# ---- contenders ---------------------------------------------------------------------------------------------------
@contextlib.contextmanager
def fast_path(enabled: bool) -> Iterator[None]:
    """The math verifier with its fast path on (as shipped) or off (every reply through the full rule)."""
    shipped = verifier.fast_verdict
    if not enabled:
        verifier.fast_verdict = lambda *args, **kwargs: None
    try:
        yield
    finally:
        verifier.fast_verdict = shipped


def oracle_loop(env: Any, indices: list[int], episodes: int) -> Callable[[], int]:
    """The plain Gymnasium loop: reset on a task index, play its reference actions until the episode ends."""
    env = env.unwrapped

    def run() -> int:
        passed = 0
        for k in range(episodes):
            env.reset(options={"task_index": indices[k % len(indices)]})
            for action in env.task.reference_actions:
                _, reward, terminated, truncated, _ = env.step(action)
                if terminated or truncated:
                    break
            passed += reward >= env.max_reward
        assert passed == episodes, f"{env.spec.id if env.spec else env}: oracle passed {passed}/{episodes}"
        return episodes

    return run


def with_fast_path(run: Callable[[], int], enabled: bool) -> Callable[[], int]:
    def wrapped() -> int:
        with fast_path(enabled):
            return run()

    return wrapped


def verify_loop(tasks: list[Any], episodes: int, enabled: bool) -> Callable[[], int]:
    replies = [[task.reference_actions[0]] for task in tasks]

    def run() -> int:
        with fast_path(enabled):
            for k in range(episodes):
                assert verifier.verify(tasks[k % len(tasks)], replies[k % len(tasks)]).passed
        return episodes

    return run


def runner(
    env_id: str, indices: list[int], episodes: int, concurrency: int, isolation: str | None = None
) -> Callable[[], int]:
    """`collect` with the oracle; `isolation` None is what the env declares (`inline` for the math env)."""
    plan = [indices[k % len(indices)] for k in range(episodes)]

    def run() -> int:
        done = asyncio.run(collect(env_id, OracleAgent(), tasks=plan, concurrency=concurrency, isolation=isolation))
        failed = [e for e in done if not e.passed]
        if failed:  # an oracle fails only through infrastructure (a timeout on an overloaded machine): say so
            first = failed[0]
            raise RuntimeError(f"runner c={concurrency}: {len(failed)} failed; first: {first.error or first.verdict}")
        return episodes

    return run


def warmed(env_id: str, count: int) -> tuple[Any, list[int]]:
    """An env whose first `count` tasks are built (pre-built items), and their indices."""
    env = rlvr_gym.make(env_id)
    indices = list(range(count))
    for index in indices:
        env.reset(options={"task_index": index})
    return env, indices


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=20_000, help="plain-loop episodes per round")
    parser.add_argument("--runner-episodes", type=int, default=2_000, help="runner episodes per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tasks", type=int, default=500, help="distinct pre-built tasks the episodes cycle over")
    parser.add_argument("--skip-families", action="store_true")
    parser.add_argument(
        "--isolation", choices=["process"], help="also run the runner with env calls in child processes"
    )
    args = parser.parse_args()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    env, indices = warmed(MATH_ENV, args.tasks)
    tasks = [env.unwrapped.get_task(i) for i in indices]
    math_loop = oracle_loop(env, indices, args.episodes)
    single = interleaved(
        {
            "math plain loop": math_loop,
            "math plain loop, full rule": with_fast_path(math_loop, False),
            "math verify (fast path)": verify_loop(tasks, args.episodes, True),
            "math verify (full rule)": verify_loop(tasks, args.episodes, False),
        },
        args.rounds,
    )
    print_table(f"{MATH_ENV}, oracle replies, {args.tasks} pre-built tasks", single, "math plain loop")

    n = args.runner_episodes
    per_episode_loop = oracle_loop(env, indices, n)
    extra = {}
    if args.isolation == "process":
        extra = {f"runner c={c}, process": runner(MATH_ENV, indices, n, c, "process") for c in (1, 64)}
    runs = interleaved(
        {
            **extra,
            "plain loop": per_episode_loop,
            "runner c=1": runner(MATH_ENV, indices, n, 1),
            "runner c=64": runner(MATH_ENV, indices, n, 64),
            "runner c=512": runner(MATH_ENV, indices, n, 512),
            "runner c=1, threads": runner(MATH_ENV, indices, n, 1, "thread"),
            "runner c=64, threads": runner(MATH_ENV, indices, n, 64, "thread"),
            "runner c=512, threads": runner(MATH_ENV, indices, n, 512, "thread"),
        },
        args.rounds,
    )
    print_table(f"rollout runner vs the plain loop, {n} episodes per round", runs, "plain loop")
    overhead_c1 = runs["runner c=1"].median_us - runs["plain loop"].median_us
    c512_vs_c64 = runs["runner c=512"].rate / runs["runner c=64"].rate
    overhead_cpu = runs["runner c=1"].cpu_median_us - runs["plain loop"].cpu_median_us
    print(
        f"runner overhead at c=1: {overhead_c1:.1f} us/episode wall, {overhead_cpu:.1f} us CPU; "
        f"c=512 / c=64 throughput: {c512_vs_c64:.2f}"
    )

    families: dict[str, Stat] = {}
    if not args.skip_families:
        contenders = {"math": oracle_loop(env, indices, args.episodes // 10)}
        for family, (env_id, episodes) in FAMILIES.items():
            family_env, family_indices = warmed(env_id, min(episodes, 50))
            contenders[family] = oracle_loop(family_env, family_indices, episodes)
        families = interleaved(contenders, args.rounds)
        print_table("plain loop per family (oracle, pre-built tasks)", families, "math")

    print(
        json.dumps(
            {
                "benchmark": "env_overhead",
                "host": host(),
                "rounds": args.rounds,
                "versions": versions("rlvr-gym", "gymnasium", "pydantic"),
                "math_env": MATH_ENV,
                "single_turn_us": {k: asdict(v) for k, v in single.items()},
                "fast_path_speedup_loop": single["math plain loop, full rule"].median_us
                / single["math plain loop"].median_us,
                "fast_path_speedup_verify": single["math verify (full rule)"].median_us
                / single["math verify (fast path)"].median_us,
                "runner_us": {k: asdict(v) for k, v in runs.items()},
                "runner_overhead_us_c1": overhead_c1,
                "runner_overhead_cpu_us_c1": overhead_cpu,
                "runner_c1_vs_plain": runs["runner c=1"].median_us / runs["plain loop"].median_us,
                "runner_c512_vs_c64_throughput": c512_vs_c64,
                "family_us": {k: asdict(v) for k, v in families.items()},
            }
        )
    )


if __name__ == "__main__":
    main()
