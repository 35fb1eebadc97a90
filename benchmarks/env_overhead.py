"""Runner + env + verifier time against the verifier alone, on the same oracle outputs of rlvr/Math-v0.

Baseline: a plain loop calling the env's pure verifier (`score_answer`) on pre-built tasks and outputs.
Measured: `rlvr_gym.rollout.collect` with the oracle agent (reset, step, verdict, Episode record, JSONL stream).
Prints the overhead ratio (measured / baseline) and episodes/s, then one JSON line. With `--isolation process`
the env runs in child processes (killable on timeout) and the ratio against the thread path, measured in the same
run, is printed too.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

import rlvr_gym
from rlvr_gym.agents.scripted import OracleAgent
from rlvr_gym.rollout import collect


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=20_000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--env", default="rlvr/Math-v0")
    parser.add_argument("--isolation", choices=["thread", "process"], default="thread")
    args = parser.parse_args()

    env = rlvr_gym.make(args.env)
    t0 = time.perf_counter()
    tasks = [env.get_task(i) for i in range(args.episodes)]
    generation_s = time.perf_counter() - t0
    outputs = [task.reference_actions[0] for task in tasks]

    t0 = time.perf_counter()
    verdicts = [env.score_answer(task, out) for task, out in zip(tasks, outputs, strict=True)]
    verifier_s = time.perf_counter() - t0
    assert all(v.passed for v in verdicts)

    def run(isolation: str) -> float:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "episodes.jsonl"
            t0 = time.perf_counter()
            episodes = asyncio.run(
                collect(
                    args.env,
                    OracleAgent(),
                    tasks=args.episodes,
                    concurrency=args.concurrency,
                    output=out,
                    isolation=isolation,
                )
            )
            seconds = time.perf_counter() - t0
        assert len(episodes) == args.episodes and all(e.passed for e in episodes)
        return seconds

    runner_s = run("thread")
    process_s = run("process") if args.isolation == "process" else None

    ratio = runner_s / verifier_s
    ratio_with_tasks = runner_s / (verifier_s + generation_s)
    print(f"episodes: {args.episodes}  concurrency: {args.concurrency}")
    print(f"verifier alone:           {verifier_s:8.2f} s  ({args.episodes / verifier_s:9.0f} verdicts/s)")
    print(f"task generation alone:    {generation_s:8.2f} s")
    print(f"runner + env + verifier:  {runner_s:8.2f} s  ({args.episodes / runner_s:9.0f} episodes/s)")
    print(f"overhead ratio (runner / verifier):                 {ratio:.3f}")
    print(f"overhead ratio (runner / (verifier + generation)):  {ratio_with_tasks:.3f}")
    record = {
        "benchmark": "env_overhead",
        "env": args.env,
        "episodes": args.episodes,
        "verifier_s": verifier_s,
        "generation_s": generation_s,
        "runner_s": runner_s,
        "overhead_ratio": ratio,
        "overhead_ratio_incl_generation": ratio_with_tasks,
        "episodes_per_s": args.episodes / runner_s,
    }
    if process_s is not None:
        extra_us = (process_s - runner_s) / args.episodes * 1e6
        print(f"process isolation:        {process_s:8.2f} s  ({args.episodes / process_s:9.0f} episodes/s)")
        print(f"process / thread ratio:   {process_s / runner_s:.3f}  ({extra_us:+.0f} us per episode)")
        record.update(
            {"process_s": process_s, "process_vs_thread_ratio": process_s / runner_s, "process_extra_us": extra_us}
        )
    print(json.dumps(record))


if __name__ == "__main__":
    main()
