"""Warm worker: runs inside the sandbox (bubblewrap, or a container), one forked child per job (see jobcore).

``/usr/bin/python3 -I -S worker.py UID HOST_PIDNS MEM_CGROUP PIDS_CGROUP OOM_CONTROL`` (``-`` for none).
Protocol on fd 0 / fd 1, framed (jobcore.send_frame): the supervisor sends a hello, the worker answers
``{"ready": true}``, then each job spec is answered by its result; EOF ends the worker. Modules a typical
job imports are loaded once here, so each forked child starts warm.
"""

import gc
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jobcore  # noqa: E402

PRELOAD = ("collections", "itertools", "functools", "math", "re", "heapq", "bisect", "string", "json", "typing",
           "random", "traceback", "io", "types", "atexit", "dataclasses", "operator", "copy", "statistics")
CLEAN_ENV = {"PATH": jobcore.PATH, "LANG": "C.UTF-8"}


def main() -> None:
    if dict(os.environ) != CLEAN_ENV:
        # a job forked from here sees this process's initial environ block in /proc/self/environ: make it clean
        os.execve(sys.executable, [sys.executable, "-I", "-S", *sys.argv], CLEAN_ENV)
    uid, host_pidns = int(sys.argv[1]), int(sys.argv[2])
    mem_cg, pids_cg, oom = (None if a == "-" else a for a in (sys.argv[3:6] + ["-"] * 3)[:3])
    os.chmod("/tmp", 0o1777)
    ctx = jobcore.Context(uid, host_pidns, mem_cg, pids_cg, oom_control=oom)
    for name in PRELOAD:
        try:
            __import__(name)
        except ImportError:
            pass
    ctx.join_cgroups()
    ctx.lock_down()
    gc.collect()
    gc.freeze()  # keep the forked children's copy-on-write pages shared
    jobcore.recv_frame(0)
    jobcore.send_frame(1, {"ready": True})
    while True:
        try:
            spec = jobcore.recv_frame(0)
        except EOFError:
            return
        try:
            result = jobcore.run_job(spec, ctx)
        except Exception as exc:  # report, and let the supervisor recycle this worker
            result = {"status": "sandbox_error", "reason": f"worker: {type(exc).__name__}: {exc}", "dirty": True}
        jobcore.send_frame(1, result)


if __name__ == "__main__":
    main()
