"""Per-slot job cgroups (cgroup v1: memory, pids, cpu, cpuacct, freezer), created and removed by the host side.

Each slot of a sandbox gets ``<own cgroup>/rlvr-<pid>-<tag>/slot<k>-<generation>`` in every hierarchy. Only
the control files in ``in_sandbox/paths.CGROUP_FILES`` are bound into the slot's sandbox (``binds``); the job's
first process moves itself in and every process it starts stays there (see ``in_sandbox/jobcgroup.py``). The
sandbox's base group gets ``cpu.shares`` of one process per slot, and every slot the same share of it, so a job
running many processes weighs as much as one running one.
"""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path

from .errors import SandboxUnavailable
from .in_sandbox.paths import CGROUP_DIR, CGROUP_FILES

ROOT = Path("/sys/fs/cgroup")
CONTROLLERS = tuple(CGROUP_FILES)
SHARES_PER_SLOT = 1024


def own_cgroup(controller: str) -> str:
    """This process's cgroup path in a v1 hierarchy (relative, no leading slash)."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, names, path = line.split(":", 2)
        if controller in names.split(","):
            return path.lstrip("/")
    raise SandboxUnavailable(f"cgroup v1 controller '{controller}' is not mounted (see /proc/self/cgroup)")


class CgroupSlots:
    """The per-slot cgroups of one sandbox instance."""

    def __init__(self, slots: int) -> None:
        tag = self.tag = f"rlvr-{os.getpid()}-{secrets.token_hex(3)}"
        self._parents: list[str] = []
        self.bases: dict[str, Path] = {}
        self.generation: dict[int, int] = {}
        for ctl in CONTROLLERS:
            parent = ROOT / ctl / own_cgroup(ctl)
            remove_stale(parent)
            base = parent / tag
            try:
                base.mkdir(parents=False)
            except OSError as exc:
                self.close()
                raise SandboxUnavailable(
                    f"cannot create cgroup {base}: {exc}. The sandboxes need writable cgroup v1 memory, pids, cpu, "
                    "cpuacct and freezer controllers (run as root), or cgroups=False to rely on rlimits alone."
                ) from exc
            self.bases[ctl] = base
        _write(self.bases["cpu"] / "cpu.shares", str(SHARES_PER_SLOT * max(1, slots)))

    def _path(self, ctl: str, slot: int) -> Path:
        return self.bases[ctl] / f"slot{slot}-{self.generation.get(slot, 0)}"

    def slot(self, index: int) -> dict[str, str]:
        """Host path of each control file -> where it is bound inside the sandbox."""
        binds = {}
        for ctl in CONTROLLERS:
            path = self._path(ctl, index)
            path.mkdir(exist_ok=True)
            if ctl == "cpu":
                _write(path / "cpu.shares", str(SHARES_PER_SLOT))
            for name in CGROUP_FILES[ctl]:
                if (path / name).exists():
                    binds[str(path / name)] = f"{CGROUP_DIR}/{ctl}/{name}"
        return binds

    def tasks(self, index: int) -> list[int]:
        found = set()
        for ctl in CONTROLLERS:
            try:
                found.update(int(x) for x in (self._path(ctl, index) / "tasks").read_text().split())
            except OSError:
                pass
        return sorted(found)

    def retire(self, index: int, timeout: float = 3.0) -> bool:
        """After the slot's sandbox is gone: True when its cgroups are empty (then reused), else a new generation.

        A slot whose cgroup still holds a process is never handed to another job.
        """
        deadline = time.monotonic() + timeout
        while self.tasks(index) and time.monotonic() < deadline:
            time.sleep(0.01)
        if not self.tasks(index):
            return True
        self.generation[index] = self.generation.get(index, 0) + 1
        return False

    def container_parent(self, slots: int) -> str:
        """A ``cgroup_parent`` for the container backend's containers (their worker, template and init).

        Containers otherwise share podman's one ``libpod_parent`` group with every other container on the machine;
        this one weighs one process per slot (like the jobs' base group), so on a busy machine the sandbox gets
        neither less nor more CPU than the processes it replaces.
        """
        for stale in {p.name for p in ROOT.glob("*/rlvr-*-*-trusted")}:
            if not _owner_alive(stale):
                _rmdir_everywhere(stale, timeout=0.0)
        name = self.tag + "-trusted"
        path = ROOT / "cpu" / name
        path.mkdir(exist_ok=True)
        _write(path / "cpu.shares", str(SHARES_PER_SLOT * max(1, slots)))
        self._parents.append(name)
        return "/" + name

    def close(self) -> None:
        """Remove the slot directories; a cgroup can only go once its processes are gone, so retry briefly."""
        for name in self._parents:
            _rmdir_everywhere(name)
        self._parents = []
        for base in self.bases.values():
            for _ in range(100):
                try:
                    for child in base.iterdir():
                        if child.is_dir():
                            child.rmdir()
                    base.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)
        self.bases = {}


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _owner_alive(name: str) -> bool:
    try:
        return Path(f"/proc/{int(name.split('-')[1])}").exists()
    except (IndexError, ValueError):
        return True


def _rmdir_everywhere(name: str, timeout: float = 3.0) -> None:
    """Remove ``/<name>`` from every hierarchy; the engine removes its containers' groups inside asynchronously."""
    deadline = time.monotonic() + timeout
    while True:
        left = [h / name for h in ROOT.iterdir() if (h / name).is_dir()]
        for path in left:
            try:
                for child in path.iterdir():  # e.g. the engine's shared "conmon" group
                    if child.is_dir():
                        child.rmdir()
                path.rmdir()
            except OSError:
                pass
        if not any(p.is_dir() for p in left) or time.monotonic() >= deadline:
            return
        time.sleep(0.05)


def remove_stale(parent: Path) -> None:
    """Slot cgroups left by sandbox processes that died without closing (``rlvr-<pid>-<tag>``)."""
    try:
        entries = list(parent.glob("rlvr-*-*"))
    except OSError:
        return
    for base in entries:
        try:
            pid = int(base.name.split("-")[1])
        except (IndexError, ValueError):
            continue
        if Path(f"/proc/{pid}").exists():
            continue
        for child in base.iterdir():
            if child.is_dir():
                try:
                    child.rmdir()
                except OSError:
                    pass
        try:
            base.rmdir()
        except OSError:
            pass
