"""The slot's per-job cgroups, seen from inside the sandbox: join, limit, meter, and kill everything in them.

The backend creates one cgroup per slot in each v1 hierarchy (memory, pids, cpu, cpuacct, freezer) and binds
only their control files in (``paths.CGROUP_FILES``). Each job's first process moves itself in before it
drops to the job uid; every process it starts is born inside and cannot leave (moving needs root). So the
cgroup *is* the job: memory, process count and CPU time are limits of the whole job, CPU weight is per job,
and the kill at the end reaches every process whatever it did (new sessions, re-parenting, stopped, a leader
that exited while its threads live): freeze, SIGKILL every task, thaw, and check the cgroup is empty.
"""

from __future__ import annotations

import os
import signal
import time

try:
    from .paths import CGROUP_DIR, CGROUP_FILES
except ImportError:
    from paths import CGROUP_DIR, CGROUP_FILES

KILL_TIMEOUT_S = 5.0


class JobCgroup:
    """Control files that exist under ``root`` (a backend may bind only some controllers)."""

    def __init__(self, root: str = CGROUP_DIR) -> None:
        self.files = {}
        for ctl, names in CGROUP_FILES.items():
            for name in names:
                path = os.path.join(root, ctl, name)
                if os.path.exists(path):
                    self.files[(ctl, name)] = path
        self._limits: tuple | None = None

    def has(self, ctl: str, name: str = "tasks") -> bool:
        return (ctl, name) in self.files

    @property
    def contains_jobs(self) -> bool:
        """True when jobs are confined here (the freezer is what makes the kill complete)."""
        return self.has("freezer") and self.has("freezer", "freezer.state")

    def _write(self, ctl: str, name: str, value: str) -> None:
        with open(self.files[(ctl, name)], "w") as f:
            f.write(value)

    def _read(self, ctl: str, name: str) -> str:
        with open(self.files[(ctl, name)]) as f:
            return f.read()

    def join(self) -> None:
        """Move the calling (single-threaded, still root) process into every bound cgroup."""
        for (_ctl, name), path in self.files.items():
            if name == "tasks":
                with open(path, "w") as f:
                    f.write("0")

    def set_limits(self, memory_mb: int, processes: int) -> None:
        if self._limits == (memory_mb, processes):
            return
        if self.has("memory", "memory.limit_in_bytes"):
            value = str(memory_mb << 20)
            names = [n for n in ("memory.limit_in_bytes", "memory.memsw.limit_in_bytes") if self.has("memory", n)]
            for order in (names, names[::-1]):  # memsw >= limit must hold after every write
                try:
                    for name in order:
                        self._write("memory", name, value)
                    break
                except OSError:
                    continue
        if self.has("pids", "pids.max"):
            self._write("pids", "pids.max", str(processes))
        self._limits = (memory_mb, processes)

    def reset_cpu(self) -> None:
        if self.has("cpuacct", "cpuacct.usage"):
            self._write("cpuacct", "cpuacct.usage", "0")

    def cpu_seconds(self) -> float | None:
        """CPU time of every process the job ever ran (dead ones included), or None when not metered."""
        if not self.has("cpuacct", "cpuacct.usage"):
            return None
        return int(self._read("cpuacct", "cpuacct.usage")) / 1e9

    def oom_kills(self) -> int:
        if not self.has("memory", "memory.oom_control"):
            return 0
        for line in self._read("memory", "memory.oom_control").splitlines():
            if line.startswith("oom_kill "):
                return int(line.split()[1])
        return 0

    def tasks(self) -> list[int]:
        """Every thread in the job (a zombie leader's live threads included)."""
        pids = set()
        for (_ctl, name), path in self.files.items():
            if name == "tasks":
                with open(path) as f:
                    pids.update(int(x) for x in f.read().split())
        pids.discard(0)  # not visible in this pid namespace
        return sorted(pids)

    def kill_all(self, timeout: float = KILL_TIMEOUT_S) -> bool:
        """Kill every process of the job; True when the cgroups are verifiably empty afterwards."""
        if not self.tasks():
            return True
        deadline = time.monotonic() + timeout
        frozen = self._freeze(deadline)
        try:
            for tid in self.tasks():
                _sigkill(tid)
        finally:
            if frozen is not None:
                self._write("freezer", "freezer.state", "THAWED")  # a frozen task dies only once thawed
        while time.monotonic() < deadline:
            left = self.tasks()
            if not left:
                return True
            for tid in left:  # only possible without a freezer: a fork raced the first pass
                _sigkill(tid)
            time.sleep(0.001)
        return not self.tasks()

    def _freeze(self, deadline: float) -> bool | None:
        if not self.contains_jobs:
            return None
        self._write("freezer", "freezer.state", "FROZEN")
        while time.monotonic() < deadline:
            if self._read("freezer", "freezer.state").strip() == "FROZEN":
                return True
            time.sleep(0.0005)
        return False


def _sigkill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)  # a thread id signals its whole thread group
    except (ProcessLookupError, PermissionError):
        pass
