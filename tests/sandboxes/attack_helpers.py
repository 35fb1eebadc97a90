"""Shared pieces of the adversarial suite (test_attack_*.py): run an attack program, read what it found."""

from __future__ import annotations

import json
import os
import textwrap
from concurrent.futures import ThreadPoolExecutor

from rlvr_gym.sandboxes import ExecRequest, Limits, Status
from rlvr_gym.sandboxes.in_sandbox.job_lifecycle import UID_ROTATION

QUICK = Limits(wall_s=10, cpu_s=10)


def run(sandbox, code: str, **kwargs):
    kwargs.setdefault("limits", QUICK)
    return sandbox.run(ExecRequest(code=textwrap.dedent(code), **kwargs))


def probe(sandbox, code: str, **kwargs) -> dict:
    """Run an attack that reports what it achieved as a JSON object on its last stdout line."""
    result = run(sandbox, code, **kwargs)
    assert result.status is Status.OK, (result.status, result.error, result.stderr[-2000:])
    return json.loads(result.stdout.strip().splitlines()[-1])


def concurrently(*calls):
    """Run zero-argument callables at the same time (different sandbox slots); their results in order."""
    with ThreadPoolExecutor(len(calls)) as pool:
        futures = [pool.submit(call) for call in calls]
        return [f.result() for f in futures]


def live_job_processes(sandbox) -> list[str]:
    """Host view: processes with a live thread running as any job uid of this sandbox (should be none)."""
    low, high = sandbox._uid_base, sandbox._uid_base + 64 * UID_ROTATION
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if not low <= os.stat(f"/proc/{pid}").st_uid < high:
                continue
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X"):
                        found.append(pid)
                        break
        except OSError:
            pass
    return found


def syscall_probe(calls: str) -> str:
    """A program making raw syscalls with ctypes; ``calls`` fills ``res`` with name -> (return value, errno)."""
    return (
        "import ctypes, json, os, socket\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "libc.syscall.restype = ctypes.c_long\n"
        "def sc(nr, *args):\n"
        "    ctypes.set_errno(0)\n"
        "    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])\n"
        "    return [r, ctypes.get_errno()]\n"
        "res = {}\n" + textwrap.dedent(calls) + "\nprint(json.dumps(res))\n"
    )
