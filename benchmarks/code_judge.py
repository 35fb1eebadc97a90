"""Code verifier throughput: the trusted-side judge against the classic unprotected HumanEval harness.

Scores the canonical solutions of the first N HumanEval problems two ways in one run:
  judge  `evaluate_many` (tests in this process, candidate calls in the local sandbox, plain-data values back)
  naive  one fresh `python` subprocess per problem running program + tests + check() in one process, verdict by
         exit code (the original human-eval harness shape: no sandbox, the candidate can change the verdict)
and prints problems/s for each, their ratio, the pass counts, then one JSON line.

    python benchmarks/code_judge.py [--tasks 164] [--workers 8]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

from rlvr_gym.envs.code.execution import CodeExecutor
from rlvr_gym.envs.code.program import assemble
from rlvr_gym.envs.code.spec import spec_of
from rlvr_gym.envs.code.tasks import HumanEvalTasks
from rlvr_gym.envs.code.verifier import evaluate_many


def naive_pass(source: str) -> bool:
    with tempfile.NamedTemporaryFile("w", suffix=".py") as handle:
        handle.write(source)
        handle.flush()
        done = subprocess.run([sys.executable, handle.name], capture_output=True, timeout=60, check=False)
    return done.returncode == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=164)
    parser.add_argument("--workers", type=int, default=8)
    args = parser.parse_args()
    source = HumanEvalTasks(split="eval")
    tasks = [source.task(i) for i in range(min(args.tasks, len(source)))]
    specs = [spec_of(t) for t in tasks]
    executor = CodeExecutor(workers=args.workers)
    evaluate_many(tasks[:2], [s.reference_solution for s in specs[:2]], executor=executor)  # warm the sandbox

    start = time.perf_counter()
    reports = evaluate_many(tasks, [s.reference_solution for s in specs], executor=executor)
    judge_s = time.perf_counter() - start
    judge_passed = sum(r.components["tests"] == 1.0 for r in reports)

    programs = [
        f"{assemble(s.preamble, s.reference_solution).source}\n\n{s.check_source}\n\ncheck({s.entry_point})\n"
        for s in specs
    ]
    start = time.perf_counter()
    with ThreadPoolExecutor(args.workers) as pool:
        naive_passed = sum(pool.map(naive_pass, programs))
    naive_s = time.perf_counter() - start

    n = len(tasks)
    print(f"judge: {n / judge_s:7.1f} problems/s  ({judge_passed}/{n} pass, {judge_s:.2f} s)")
    print(f"naive: {n / naive_s:7.1f} problems/s  ({naive_passed}/{n} pass, {naive_s:.2f} s)")
    print(f"judge / naive throughput: {naive_s / judge_s:.2f}x")
    print(
        json.dumps(
            {
                "benchmark": "code_judge",
                "tasks": n,
                "judge_per_s": n / judge_s,
                "naive_per_s": n / naive_s,
                "ratio": naive_s / judge_s,
                "judge_passed": judge_passed,
                "naive_passed": naive_passed,
            }
        )
    )


if __name__ == "__main__":
    main()
