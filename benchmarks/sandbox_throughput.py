"""MBPP-style jobs per second: naive subprocess-per-job vs the local sandbox vs the container sandbox.

Also, in the same run: what each protection costs (jobs/s with it switched off, all others on) and whether a
30-process spinner job starves an honest neighbouring job (its run time alone vs next to the spinner).

Each job is a small function plus three asserts (as an MBPP task with its tests). Every mode runs the same jobs
with the same concurrency (jobs in flight), in the same run, and every job must succeed. Sandbox jobs are
latency-bound (a few process wake-ups each), so on a busy machine throughput depends on jobs in flight; the
benchmark reports 1x and 2x the core count, for every mode alike. The baseline is the naive way of
running untrusted code: one ``python -c`` subprocess per job with this interpreter (no isolation at all);
``/usr/bin/python3 -I -S`` is reported as a second, faster baseline.

    python benchmarks/sandbox_throughput.py [--jobs 300] [--concurrency 2,4] [--no-container] [--quick]
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


def measure(c: int, jobs: int, container: bool, rounds: int = 3) -> dict:
    """Every mode at concurrency ``c``; rates in jobs/s.

    The modes take turns, ``rounds`` times, and each figure is the median over the rounds, so a load change on a
    shared machine hits every mode alike.
    """
    import statistics
    from contextlib import ExitStack

    baseline_jobs = max(12, jobs // 8)
    modes: dict[str, tuple] = {
        "naive": (naive([sys.executable]), baseline_jobs),
        "naive_isolated_python": (naive(["/usr/bin/python3", "-I", "-S"]), baseline_jobs),
    }
    res: dict = {"concurrency": c, "rounds": rounds, "container": None}
    with ExitStack() as stack:
        modes["local"] = (sandboxed(stack.enter_context(create_sandbox("local", workers=c))), jobs)
        if container:
            try:
                # the engine (podman service, conmon) is outside our process tree: its CPU is not counted
                box = stack.enter_context(create_sandbox("docker", containers=c))
                modes["container"] = (sandboxed(box), jobs)
            except SandboxUnavailable as exc:
                res["container_skipped"] = str(exc)
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in modes}
        fails = 0
        for _ in range(rounds):
            for name, (run_one, n) in modes.items():
                rate, failed, cpu_ms = throughput(run_one, n, c)
                samples[name].append((rate, cpu_ms))
                fails += failed
    for name, values in samples.items():
        res[name] = statistics.median(v[0] for v in values)
        res[f"{name}_cpu_ms"] = statistics.median(v[1] for v in values)
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


PROTECTION_VARIANTS = {
    "local": [
        ("all on", {}),
        ("no per-job cgroups (rlimits + kill by uid)", {"cgroups": False}),
        ("no seccomp filter", {"protections": {"seccomp": False}}),
        ("no hidepid /proc", {"protections": {"hidepid": False}}),
        ("exec python3 per job (no warm template)", {"inline_python": False}),
    ],
    "docker": [
        ("all on", {}),
        ("no host cgroups (kill by uid; engine CPU group)", {"cgroups": False}),
        ("exec python3 per job (no warm template)", {"inline_python": False}),
    ],
}

HONEST = (
    "import time\nstart = time.perf_counter()\ntotal = 0\nfor i in range(1_500_000):\n    total += i * i % 7\n"
    "print(time.perf_counter() - start)\n"
)
SPINNER = (
    "import os, time\nfor _ in range(30):\n    if os.fork() == 0:\n        os.setsid()\n        while True:\n"
    "            pass\ntime.sleep(60)\n"
)


def protection_costs(backend: str, jobs: int, c: int, rounds: int = 3) -> list[dict]:
    """Jobs/s of ``backend`` with one protection off at a time; cost = how much slower "all on" is than that.

    All variants stay up together and take turns, ``rounds`` times, so load changes on a shared machine hit
    every variant alike; each figure is the median over the rounds.
    """
    import statistics
    from contextlib import ExitStack

    size = {"workers": c} if backend == "local" else {"containers": c}
    rows = []
    with ExitStack() as stack:
        boxes = []
        for label, options in PROTECTION_VARIANTS[backend]:
            try:
                boxes.append((label, stack.enter_context(create_sandbox(backend, **size, **options))))
            except SandboxUnavailable as exc:
                rows.append({"variant": label, "skipped": str(exc)})
        rates: dict[str, list[float]] = {label: [] for label, _ in boxes}
        fails: dict[str, int] = dict.fromkeys(rates, 0)
        for _ in range(rounds):
            for label, box in boxes:
                rate, failed, _ = throughput(sandboxed(box), jobs, c)
                rates[label].append(rate)
                fails[label] += failed
    rows = [
        {"variant": label, "jobs_per_s": statistics.median(r), "failures": fails[label]} for label, r in rates.items()
    ] + rows
    base = rows[0].get("jobs_per_s") if rows and rows[0]["variant"] == "all on" else None
    for row in rows[1:]:
        if base and row.get("jobs_per_s"):
            row["cost_pct"] = 100.0 * (row["jobs_per_s"] - base) / row["jobs_per_s"]
    return rows


def neighbour_spinner(backend: str, **options) -> dict:
    """An honest CPU-bound job alone, then while a 30-process spinner runs in the other slot."""
    from concurrent.futures import ThreadPoolExecutor

    size = {"workers": 2} if backend == "local" else {"containers": 2}
    with create_sandbox(backend, **size, **options) as box:
        honest = ExecRequest(code=HONEST, limits=Limits(wall_s=30, cpu_s=30))
        alone = float(box.run(honest).stdout)
        with ThreadPoolExecutor(2) as pool:
            storm = pool.submit(box.run, ExecRequest(code=SPINNER, limits=Limits(wall_s=15, cpu_s=600, processes=64)))
            time.sleep(1.0)
            result = box.run(honest)
            storm.result()
    beside = float(result.stdout) if result.status is Status.OK else None
    return {
        "backend": backend + ("" if options.get("cgroups", True) else " (no per-job cgroups)"),
        "honest_alone_s": alone,
        "honest_beside_spinner_s": beside,
        "slowdown": beside / alone if beside else None,
        "status": result.status.value,
    }


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
    parser.add_argument("--quick", action="store_true", help="fewer jobs, one concurrency level")
    args = parser.parse_args()
    if args.quick:
        args.jobs, args.concurrency = min(args.jobs, 120), str(cpus)
    runs = [measure(int(c), args.jobs, not args.no_container) for c in args.concurrency.split(",")]
    for res in runs:
        show(res)
    best = max(runs, key=lambda r: r["local_vs_naive"])
    backends = ["local"] + ([] if args.no_container else ["docker"])
    costs = {b: protection_costs(b, max(30, args.jobs // 4), cpus) for b in backends}
    print("-- cost of each protection (jobs/s with it off; cost = how much slower 'all on' is)")
    for backend, rows in costs.items():
        for row in rows:
            if "skipped" in row:
                print(f"   {backend:7s} {row['variant']:45s} skipped: {row['skipped']}")
                continue
            cost = f"{row['cost_pct']:+6.1f}%" if "cost_pct" in row else "  (ref)"
            print(f"   {backend:7s} {row['variant']:45s} {row['jobs_per_s']:7.1f} jobs/s  {cost}")
    spin = []
    for backend, options in [(b, {}) for b in backends] + [("local", {"cgroups": False})]:
        try:
            spin.append(neighbour_spinner(backend, **options))
        except SandboxUnavailable as exc:
            spin.append({"backend": backend, "skipped": str(exc)})
    print("-- honest job next to a 30-process spinner in the other slot")
    for row in spin:
        if "skipped" not in row:
            print(
                f"   {row['backend']:7s} alone {row['honest_alone_s']:.2f}s, beside spinner "
                f"{row['honest_beside_spinner_s']}s ({row['status']})"
            )
    summary = {
        "benchmark": "sandbox_throughput",
        "load_avg_1m": os.getloadavg()[0],
        "local_vs_naive": best["local_vs_naive"],
        "at_concurrency": best["concurrency"],
        "runs": runs,
        "protection_costs": costs,
        "neighbour_spinner": spin,
    }
    print(json.dumps(_rounded(summary)))
    sys.exit(1 if any(r["failures"] for r in runs) else 0)


if __name__ == "__main__":
    main()
