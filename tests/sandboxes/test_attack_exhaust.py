"""Attacker goal: EXHAUST NEIGHBOURS -- spend more than the job's share, or starve a concurrent honest job."""

from __future__ import annotations

import time

from attack_helpers import concurrently, probe, run

from rlvr_gym.sandboxes import Limits, Status

HONEST = """
import time
start = time.perf_counter()
total = 0
for i in range(1_500_000):
    total += i * i % 7
print(round(time.perf_counter() - start, 3))
"""


def test_cpu_budget_is_for_the_whole_job(sandbox):
    """Eight processes, each well under a per-process limit, together exceed the job's CPU budget."""
    t = time.monotonic()
    r = run(
        sandbox,
        """
        import os
        for _ in range(8):
            if os.fork() == 0:
                while True:
                    pass
        while True:
            pass
    """,
        limits=Limits(cpu_s=1, wall_s=20, processes=16),
    )
    assert r.status is Status.TIMEOUT and "CPU" in (r.error or ""), (r.status, r.error)
    assert time.monotonic() - t < 10


def test_spinner_storm_does_not_starve_neighbour(sandbox):
    """30 spinners in new sessions in one slot; an honest job in the other slot keeps within its budget."""
    alone = float(run(sandbox, HONEST).stdout)
    storm = """
        import os, time
        for _ in range(30):
            if os.fork() == 0:
                os.setsid()
                while True:
                    pass
        time.sleep(30)
    """

    def honest_later():
        time.sleep(0.5)
        return run(sandbox, HONEST, limits=Limits(wall_s=max(5.0, 6 * alone), cpu_s=10))

    spun, honest = concurrently(
        lambda: run(sandbox, storm, limits=Limits(wall_s=4, cpu_s=60, processes=64)), honest_later
    )
    assert spun.status is Status.TIMEOUT
    assert honest.status is Status.OK, (honest.status, honest.error)
    # a fair share of two cores is one core: the honest job may slow down (shared machine), not starve
    assert float(honest.stdout) < max(4.0, 5 * alone), (alone, honest.stdout)


def test_fork_bomb_in_new_sessions(sandbox):
    r = run(
        sandbox,
        """
        import os
        while True:
            try:
                if os.fork() == 0:
                    os.setsid()
            except OSError:
                pass
    """,
        limits=Limits(wall_s=2, processes=32),
    )
    assert r.status is Status.TIMEOUT
    assert (
        probe(sandbox, "import json, os; print(json.dumps(len([p for p in os.listdir('/proc') if p.isdigit()])))") == 1
    )


def test_memory_spread_over_processes(sandbox):
    r = run(
        sandbox,
        """
        import os, time
        for _ in range(6):
            if os.fork() == 0:
                b = bytearray(60 << 20)
                for i in range(0, len(b), 4096):
                    b[i] = 1
                time.sleep(5)
                os._exit(0)
        os.wait()
    """,
        limits=Limits(memory_mb=200, wall_s=15),
    )
    assert r.status is Status.MEMORY, (r.status, r.error)
    assert run(sandbox, "print('alive')").stdout == "alive\n"


def test_tmpfs_pages_count_as_job_memory(sandbox):
    r = run(
        sandbox,
        """
        block = b"x" * (1 << 20)
        with open("/dev/shm/fill", "wb") as f:
            for _ in range(400):
                f.write(block)
    """,
        limits=Limits(memory_mb=128, disk_mb=512, wall_s=15),
    )
    assert r.status in (Status.MEMORY, Status.ERROR, Status.KILLED), r.status
    assert probe(sandbox, "import json, os; print(json.dumps(os.listdir('/dev/shm')))") == []


def test_descriptor_and_inotify_exhaustion(sandbox):
    run(
        sandbox,
        """
        import os
        fds = []
        try:
            while True:
                fds.append(os.inotify_init() if hasattr(os, "inotify_init") else os.open("/dev/null", 0))
        except OSError:
            pass
        import ctypes
        libc = ctypes.CDLL(None)
        n = 0
        while libc.inotify_init() >= 0:
            n += 1
        print(n)
    """,
    )
    found = probe(
        sandbox,
        """
        import ctypes, json
        print(json.dumps(ctypes.CDLL(None).inotify_init() >= 0))
    """,
    )
    assert found is True


def test_output_flood_from_children(sandbox):
    r = run(
        sandbox,
        """
        import os
        for _ in range(4):
            if os.fork() == 0:
                while True:
                    os.write(1, b"z" * 65536)
        os.wait()
    """,
        limits=Limits(output_bytes=200_000, wall_s=10),
    )
    assert r.status is Status.OUTPUT_LIMIT and len(r.stdout) + len(r.stderr) <= 200_000
