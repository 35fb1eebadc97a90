"""Robot-program execution: sandbox jobs batching world states vs a fresh Python subprocess per (program, state).

The baseline is what RoboEval does (spec §2.3): a new interpreter per (program, state) running the simulator and
the program, here the very same job script with one run and no sandbox at all. Ours is one hardened sandbox job
(warm fork, per-job cgroup, seccomp, own uid) per program with all of its runs, the trace replayed by the parent.
Both sides run the same reference programs on the same states, sequentially, in this process's run.

    .venv/bin/python benchmarks/robot.py [--programs 24] [--batch 5]

Prints the per-(program, state) time of each, the ratio, and one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rlvr_gym.envs.robot.checkspec import holds  # noqa: E402
from rlvr_gym.envs.robot.execution import RobotExecutor, job_input, job_source, read_records  # noqa: E402
from rlvr_gym.envs.robot.program import extract  # noqa: E402
from rlvr_gym.envs.robot.simulator import WorldState  # noqa: E402
from rlvr_gym.envs.robot.tasks import RobotTasks  # noqa: E402


def workload(programs: int, batch: int) -> list[tuple[str, list[WorldState], list]]:
    """Reference programs with `batch` runs each (their task's states, repeated when a task has fewer)."""
    source = RobotTasks(split="eval")
    items = []
    for index in range(programs):
        task = source.task(index)
        states = [WorldState.from_json(s) for s in task.ground_truth["states"]]
        checks = task.ground_truth["checks"]
        runs = [states[k % len(states)] for k in range(batch)]
        items.append((extract(task.reference_actions[0]).code, runs, [checks[k % len(checks)] for k in range(batch)]))
    return items


def fresh_subprocess(items, python: str) -> tuple[float, int]:
    """Seconds per (program, state) with one new interpreter each; returns (per-run s, runs that passed)."""
    passed, runs, t0 = 0, 0, time.perf_counter()
    for code, states, _checks in items:
        for state in states:
            stdin = job_input(code, [(state, None)], 1.0)
            # The job refuses to run without a fixed hash seed (determinism by construction): give it one.
            env = {**os.environ, "PYTHONHASHSEED": "0"}
            done = subprocess.run([python, "-c", job_source()], input=stdin, capture_output=True, text=True,
                                  timeout=30, check=False, env=env)  # fmt: skip
            record = read_records(done.stdout, 1).get(0)
            passed += bool(record and record["end"] == "ok")
            runs += 1
    return (time.perf_counter() - t0) / runs, passed


def sandbox_batches(items, executor: RobotExecutor) -> tuple[float, int]:
    passed, runs, t0 = 0, 0, time.perf_counter()
    for code, states, checks in items:
        outcomes = executor.run(code, [(s, None) for s in states])
        passed += sum(o.clean and holds(c, o.trace) for o, c in zip(outcomes, checks, strict=True))
        runs += len(states)
    return (time.perf_counter() - t0) / runs, passed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=24)
    parser.add_argument("--batch", type=int, default=5, help="runs per sandbox job (a verify uses 4-5)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--python",
        default=shutil.which("python3", path="/usr/bin") or sys.executable,
        help="baseline interpreter (default: the system python3, lighter to start than a venv's)",
    )
    args = parser.parse_args()
    items = workload(args.programs, args.batch)
    executor = RobotExecutor()
    executor.run(items[0][0], [(items[0][1][0], None)])  # start the sandbox's warm workers
    fresh, ours = [], []
    for _ in range(args.repeats):
        fresh.append(fresh_subprocess(items, args.python))
        ours.append(sandbox_batches(items, executor))
    fresh_s = statistics.median(t for t, _ in fresh)
    ours_s = statistics.median(t for t, _ in ours)
    total = args.programs * args.batch
    print(f"fresh subprocess per (program, state): {fresh_s * 1000:.1f} ms ({fresh[-1][1]}/{total} clean)")
    print(f"sandbox job per program, {args.batch} states each: {ours_s * 1000:.1f} ms per state "
          f"({ours[-1][1]}/{total} passed)")  # fmt: skip
    print(f"speed-up: {fresh_s / ours_s:.1f}x")
    print(json.dumps({"benchmark": "robot_execution", "programs": args.programs, "batch": args.batch,
                      "fresh_ms_per_state": round(fresh_s * 1000, 2), "sandbox_ms_per_state": round(ours_s * 1000, 2),
                      "ratio": round(fresh_s / ours_s, 2), "baseline_python": args.python}))  # fmt: skip


if __name__ == "__main__":
    main()
