"""Fallback job kill where no per-job cgroup is bound in: every process of the job's (per-job) uid.

``kill(-1)`` signals every process the caller may signal, so it is only issued from a helper that has become
the job uid (it can reach nothing but the job's processes) *and* only inside a pid namespace that is not the
host's (checked against the inode the supervisor passed in): two independent guards. A process counts as alive
while any of its threads is (a leader that called ``exit`` is a zombie while its threads run on).
"""

from __future__ import annotations

import os
import signal
import time


def pidns_inode() -> int | None:
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return None


def uid_pids(uid: int) -> list[int]:
    me = os.getpid()
    pids = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != me:
            try:
                if os.stat(f"/proc/{name}").st_uid == uid and has_live_thread(int(name)):
                    pids.append(int(name))
            except OSError:
                pass
    return pids


def has_live_thread(pid: int) -> bool:
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat", "rb") as f:
                if f.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X"):
                    return True
        except (OSError, IndexError):
            pass
    return False


def kill_uid(uid: int, host_pidns: int) -> bool:
    """Kill every process of ``uid``; True when none is left."""
    if not uid_pids(uid):
        return True
    allowed = pidns_inode() not in (None, host_pidns)
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            if os.getuid() == uid and uid != 0:
                _kill_all_as_self() if allowed else _kill_listed()
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    return not uid_pids(uid)


def _kill_all_as_self() -> None:
    me = os.getpid()
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            return
        if not [p for p in uid_pids(os.getuid()) if p != me]:
            return
        time.sleep(0.001)


def _kill_listed() -> None:
    me = os.getpid()
    for _ in range(100):
        pids = [p for p in uid_pids(os.getuid()) if p != me]
        if not pids:
            return
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.005)
