"""MBPP-style jobs per second: naive subprocess-per-job vs the local sandbox vs the container sandbox.

Each job is a small function plus three asserts (as an MBPP task with its tests). Every mode runs the same jobs
with the same concurrency (jobs in flight), in the same run, and every job must succeed. Sandbox jobs are
latency-bound (a few process wake-ups each), so on a busy machine throughput depends on jobs in flight; the
benchmark reports 1x and 2x the core count, for every mode alike. The baseline is the naive way of
running untrusted code: one ``python -c`` subprocess per job with this interpreter (no isolation at all);
``/usr/bin/python3 -I -S`` is reported as a second, faster baseline.

    python benchmarks/sandbox_throughput.py [--jobs 300] [--concurrency 2,4] [--no-container]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from rlvr_gym.sandboxes import ExecRequest, Limits, SandboxUnavailable, Status, create_sandbox

LIMITS = Limits(wall_s=10, cpu_s=5, memory_mb=256)


def mbpp_job(i: int) -> str:
    return (
        f"def remove_odd(nums):\n    return [n for n in nums if n % 2 == 0]\n\n"
        f"assert remove_odd([1, 2, {i}]) == [2] + ([{i}] if {i} % 2 == 0 else [])\n"
        f"assert remove_odd([2, 4, 6]) == [2, 4, 6]\n"
        f"assert remove_odd([10, 20, 3]) == [10, 20]\n"
    )


def cpu_seconds() -> float:
    """CPU time of this process and every live or reaped descendant (sandbox workers and their jobs included)."""
    import resource

    tick = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[tuple[int, int]]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append((int(name), sum(int(x) for x in fields[11:15])))
    total, stack = 0, [os.getpid()]
    while stack:
        for pid, ticks in children.get(stack.pop(), []):
            total += ticks
            stack.append(pid)
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    return total / tick + time.process_time() + reaped.ru_utime + reaped.ru_stime


def throughput(run_one, jobs: int, concurrency: int) -> tuple[float, int, float]:
    """(jobs per second, failures, CPU ms per job) running ``run_one(i)`` for i < jobs on ``concurrency`` threads.

    CPU per job counts every process involved and is much less sensitive to other load on the machine.
    """
    for i in range(min(concurrency * 2, jobs)):  # warm-up: start workers/containers, page in the interpreter
        run_one(i)
    cpu, start = cpu_seconds(), time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        ok = list(pool.map(run_one, range(jobs)))
    elapsed, cpu = time.perf_counter() - start, cpu_seconds() - cpu
    return jobs / elapsed, ok.count(False), 1000 * cpu / jobs


def naive(python: list[str]):
    def run_one(i: int) -> bool:
        return subprocess.run([*python, "-c", mbpp_job(i)], capture_output=True, timeout=30).returncode == 0

    return run_one


def sandboxed(box):
    def run_one(i: int) -> bool:
        return box.run(ExecRequest(code=mbpp_job(i), limits=LIMITS)).status is Status.OK

    return run_one


def measure(c: int, jobs: int, container: bool) -> dict:
    """Every mode at concurrency ``c``; rates in jobs/s."""
    baseline_jobs = max(20, jobs // 6)
    res: dict = {"concurrency": c}
    res["naive"], fails, res["naive_cpu_ms"] = throughput(naive([sys.executable]), baseline_jobs, c)
    res["naive_isolated_python"], f, res["naive_isolated_python_cpu_ms"] = throughput(
        naive(["/usr/bin/python3", "-I", "-S"]), baseline_jobs, c
    )
    fails += f
    with create_sandbox("local", workers=c) as box:
        res["local"], f, res["local_cpu_ms"] = throughput(sandboxed(box), jobs, c)
    fails += f
    res["container"] = None
    if container:
        try:
            with create_sandbox("docker", containers=c) as box:
                # the engine (podman service, conmon) is outside our process tree: its CPU is not counted
                res["container"], f, _ = throughput(sandboxed(box), jobs // 2, c)
            fails += f
        except SandboxUnavailable as exc:
            res["container_skipped"] = str(exc)
    res["failures"] = fails
    res["local_vs_naive"] = res["local"] / res["naive"]
    res["local_vs_naive_cpu"] = res["naive_cpu_ms"] / res["local_cpu_ms"]
    res["local_vs_naive_isolated_python"] = res["local"] / res["naive_isolated_python"]
    res["container_vs_naive"] = res["container"] / res["naive"] if res["container"] else None
    return res


def show(res: dict) -> None:
    print(f"-- concurrency {res['concurrency']} (same for every mode)")
    print(
        f"   naive subprocess ({sys.executable}): {res['naive']:8.1f} jobs/s   (baseline)"
        f"   {res['naive_cpu_ms']:.1f} ms CPU/job"
    )
    print(
        f"   naive /usr/bin/python3 -I -S        : {res['naive_isolated_python']:8.1f} jobs/s"
        f"   {res['naive_isolated_python_cpu_ms']:.1f} ms CPU/job"
    )
    print(
        f"   local sandbox (isolation on)        : {res['local']:8.1f} jobs/s   = "
        f"{res['local_vs_naive']:.1f}x naive, {res['local_vs_naive_isolated_python']:.1f}x -I -S"
        f"   {res['local_cpu_ms']:.1f} ms CPU/job ({res['local_vs_naive_cpu']:.1f}x less than naive)"
    )
    if res["container"]:
        print(
            f"   container sandbox (podman)          : {res['container']:8.1f} jobs/s   = "
            f"{res['container_vs_naive']:.1f}x naive"
        )
    print(f"   failed jobs: {res['failures']}")


def _rounded(value):
    if isinstance(value, float):
        return round(value, 3)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=300, help="jobs for the local backend (others run fewer)")
    cpus = os.cpu_count() or 2
    parser.add_argument(
        "--concurrency",
        default=f"{cpus},{2 * cpus}",
        help="comma-separated jobs-in-flight levels, each run for every mode (default 1x, 2x cores)",
    )
    parser.add_argument("--no-container", action="store_true")
    args = parser.parse_args()
    runs = [measure(int(c), args.jobs, not args.no_container) for c in args.concurrency.split(",")]
    for res in runs:
        show(res)
    best = max(runs, key=lambda r: r["local_vs_naive"])
    summary = {
        "benchmark": "sandbox_throughput",
        "load_avg_1m": os.getloadavg()[0],
        "local_vs_naive": best["local_vs_naive"],
        "at_concurrency": best["concurrency"],
        "runs": runs,
    }
    print(json.dumps(_rounded(summary)))
    sys.exit(1 if any(r["failures"] for r in runs) else 0)


if __name__ == "__main__":
    main()
