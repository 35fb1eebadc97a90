"""Per-slot cgroup v1 directories (memory + pids) for the local backend's jobs.

Each worker slot gets ``<own cgroup>/rlvr-<pid>-<tag>/slot<k>`` under the memory and pids hierarchies. The
directory is bound into the worker's sandbox; the worker moves each job's child in and sets its limits there,
so a job's processes are limited together (fork bomb, memory touched past the limit) and an OOM kill is
visible in ``memory.oom_control``.
"""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path

from .errors import SandboxUnavailable

ROOT = Path("/sys/fs/cgroup")
CONTROLLERS = ("memory", "pids")


def own_cgroup(controller: str) -> str:
    """This process's cgroup path in a v1 hierarchy (relative, no leading slash)."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, names, path = line.split(":", 2)
        if controller in names.split(","):
            return path.lstrip("/")
    raise SandboxUnavailable(f"cgroup v1 controller '{controller}' is not mounted (see /proc/self/cgroup)")


class CgroupSlots:
    """Creates and removes the per-slot cgroups of one sandbox instance."""

    def __init__(self) -> None:
        tag = f"rlvr-{os.getpid()}-{secrets.token_hex(3)}"
        self.bases: dict[str, Path] = {}
        for ctl in CONTROLLERS:
            parent = ROOT / ctl / own_cgroup(ctl)
            _remove_stale(parent)
            base = parent / tag
            try:
                base.mkdir(parents=False)
            except OSError as exc:
                self.close()
                raise SandboxUnavailable(
                    f"cannot create cgroup {base}: {exc}. The local sandbox needs writable cgroup v1 memory and pids "
                    "controllers (run as root), or LocalSandbox(cgroups=False) to rely on rlimits alone."
                ) from exc
            self.bases[ctl] = base

    def slot(self, index: int) -> dict[str, str]:
        dirs = {}
        for ctl, base in self.bases.items():
            path = base / f"slot{index}"
            path.mkdir(exist_ok=True)
            dirs[ctl] = str(path)
        return dirs

    def close(self) -> None:
        """Remove the slot directories; a cgroup can only go once its processes are gone, so retry briefly."""
        for base in self.bases.values():
            for _ in range(50):
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


def _remove_stale(parent: Path) -> None:
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
