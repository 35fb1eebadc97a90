"""Leaving nothing behind when a Ray this process started stops: no processes, no temp dir, so no open ports.

`ray.shutdown()` (and `Cluster.remove_node`) stop a node's own processes (raylet, GCS, ...), but its worker
processes (env actors, policy replicas) notice that their raylet is gone only later, up to a minute, and may still
write logs into the temp dir after it was removed. So before stopping, the node processes and all their descendants
are noted by pid *and* start time (a reused pid is never touched); afterwards each gets a moment to exit, those that
did not are sent SIGKILL, and only then is the temp dir removed. Nothing but processes that Ray started for this
process is ever signalled (never `ray stop`, never a match by name).
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterable
from typing import Any

Proc = tuple[int, str]  # (pid, start time from /proc/<pid>/stat): the identity of one process


def _stat(pid: int) -> tuple[int, str, str] | None:
    """(parent pid, state, start time) of `pid`, or None when it is gone (or /proc is not there)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]), fields[0], fields[19]


def process_tree(roots: Iterable[int]) -> list[Proc]:
    """`roots` and every process descending from them, as (pid, start time)."""
    children: dict[int, list[int]] = {}
    try:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []
    for pid in pids:
        stat = _stat(pid)
        if stat is not None:
            children.setdefault(stat[0], []).append(pid)
    found: list[Proc] = []
    todo, seen = list(roots), set()
    while todo:
        pid = todo.pop()
        stat = _stat(pid)
        if pid in seen or stat is None:
            continue
        seen.add(pid)
        found.append((pid, stat[2]))
        todo.extend(children.get(pid, []))
    return found


def node_processes(nodes: Iterable[Any]) -> list[Proc]:
    """Every process of these Ray nodes (`ray._private.node.Node`) and their workers."""
    roots = [info.process.pid for node in nodes for infos in node.all_processes.values() for info in infos]
    return process_tree(roots)


def started_with(name: str, value: str) -> list[Proc]:
    """Processes started with the environment variable `name=value` (other than this one).

    A private cluster's every process inherits `RAY_TMPDIR=<its own unique temp dir>`, so this finds what the
    process tree cannot: a worker the raylet spawned after the tree was noted, or one already orphaned by it (the
    likely reason a Ctrl-C'd test driver's stdout once stayed open past 120 s in a full-suite run). `/proc/<pid>/environ` is the
    environment at exec, which a worker's retitling (`ray::IDLE`) leaves alone; unreadable entries are not ours."""
    needle = f"\0{name}={value}\0".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                environ = b"\0" + f.read()
        except OSError:
            continue
        stat = _stat(int(entry))
        if needle in environ and stat is not None:
            found.append((int(entry), stat[2]))
    return found


def alive(proc: Proc) -> bool:
    stat = _stat(proc[0])
    return stat is not None and stat[2] == proc[1] and stat[1] not in ("Z", "X")


def reap(procs: Iterable[Proc], wait_s: float = 5.0) -> list[Proc]:
    """Wait up to `wait_s` for `procs` to exit, then SIGKILL the ones left; returns those still alive after that."""
    left = [p for p in procs if p[0] != os.getpid()]
    deadline = time.monotonic() + wait_s
    while True:
        left = [p for p in left if alive(p)]
        if not left or time.monotonic() >= deadline:
            break
        time.sleep(0.05)
    for proc in left:
        if alive(proc):  # checked again right before the signal: the pid is still that process
            try:
                os.kill(proc[0], signal.SIGKILL)
            except OSError:
                pass
    deadline = time.monotonic() + 2.0
    while left and time.monotonic() < deadline:
        time.sleep(0.02)
        left = [p for p in left if alive(p)]
    return left
