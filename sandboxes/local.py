"""Local backend: a supervisor with warm fork-server workers inside bubblewrap, one fresh child per job.

Isolation layers (outermost first):

* **bubblewrap**, run by root *without* a user namespace (a root-run user namespace maps the sandbox user to
  host uid 0): new pid, net, ipc, uts, mount and cgroup namespaces; the root filesystem is an empty tmpfs with
  an allowlist bound read-only (``/usr`` and its merged-usr links, a few ``/etc`` files, the worker's code),
  a fresh ``/proc`` and ``/dev``, and a size-limited tmpfs ``/tmp`` (the job dir is ``/tmp/job``). The worker
  keeps only CAP_SETUID, CAP_SETGID, CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER and CAP_KILL (to drop to the job uid,
  collect/wipe the job's files and kill it on a limit), with no-new-privs.
* **per-slot uid** (random range, never 0): the job's child drops to it, so the kernel's uid checks keep it
  away from the worker, the cleanup can kill "everything of this uid", and RLIMIT_NPROC counts only its jobs.
* **rlimits** (address space, CPU, file size, open files, processes), **cgroup v1** memory + pids per slot,
  and a **seccomp** filter (ptrace, mount, unshare/setns/namespace clones, bpf, SysV IPC ... fail with EPERM).

Per job the worker forks a child, wipes ``/tmp`` and kills every process of the slot uid afterwards (orphans,
daemons, background sleeps), so nothing carries over. Workers are restarted after ``max_jobs`` jobs, when they
die, or when a cleanup reports leftovers.
"""

from __future__ import annotations

import os
import queue
import secrets
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from . import spec as specmod
from ._inside import jobcore
from .base import BaseSandbox, ExecRequest, ExecResult, Limits, Status
from .cgroups import CgroupSlots
from .errors import SandboxUnavailable

SANDBOX_PYTHON = "/usr/bin/python3"
INSIDE_DIR = Path(__file__).resolve().parent / specmod.INSIDE_DIR_NAME
ETC_ALLOWLIST = ("/etc/ld.so.cache", "/etc/localtime", "/etc/alternatives", "/etc/mime.types")
MERGED_USR_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
PROTOCOL_GRACE_S = 15.0
CGROUP_FILES = {"memory": ("tasks", "memory.limit_in_bytes", "memory.memsw.limit_in_bytes", "memory.oom_control"),
                "pids": ("tasks", "pids.max")}


def check_primitives() -> None:
    """Raise SandboxUnavailable naming what is missing (bubblewrap, Debian python3 + python3-seccomp)."""
    if shutil.which("bwrap") is None:
        raise SandboxUnavailable("bubblewrap is not installed: run scripts/setup_sandbox.sh "
                                 "(apt-get install bubblewrap)")
    if not os.access(SANDBOX_PYTHON, os.X_OK):
        raise SandboxUnavailable(f"{SANDBOX_PYTHON} is missing: apt-get install python3 (Debian's, readable by all)")
    probe = subprocess.run([SANDBOX_PYTHON, "-I", "-S", "-c", "import sys; sys.path.append("
                            "'/usr/lib/python3/dist-packages'); import seccomp"], capture_output=True)
    if probe.returncode != 0:
        raise SandboxUnavailable("python3-seccomp is missing for /usr/bin/python3: apt-get install python3-seccomp")
    if os.geteuid() != 0:
        raise SandboxUnavailable("the local sandbox must run as root (it drops each job to a per-slot uid)")


class _Spawner:
    """Starts processes from one long-lived thread.

    bubblewrap's --die-with-parent is PR_SET_PDEATHSIG, which fires when the *thread* that forked it exits: a
    worker started from a short-lived pool thread would die with that thread. All workers are therefore
    started from this daemon thread, which lives as long as the process.
    """

    _lock = threading.Lock()
    _jobs: queue.Queue | None = None

    @classmethod
    def popen(cls, *args, **kwargs) -> subprocess.Popen:
        with cls._lock:
            if cls._jobs is None:
                cls._jobs = queue.Queue()
                threading.Thread(target=cls._serve, name="rlvr-sandbox-spawner", daemon=True).start()
        done: queue.Queue = queue.Queue(maxsize=1)
        cls._jobs.put((args, kwargs, done))
        ok, value = done.get()
        if not ok:
            raise value
        return value

    @classmethod
    def _serve(cls) -> None:
        while True:
            args, kwargs, done = cls._jobs.get()
            try:
                done.put((True, subprocess.Popen(*args, **kwargs)))
            except BaseException as exc:  # handed back to the caller's thread
                done.put((False, exc))


class _Worker:
    """One bubblewrap'd worker process and the framed pipe protocol to it."""

    def __init__(self, slot: int, uid: int, runtime: Path, cgroups: dict[str, str] | None, disk_mb: int):
        self.slot, self.uid, self.disk_mb = slot, uid, disk_mb
        self.jobs = 0
        self.proc = _Spawner.popen(
            self._command(runtime, cgroups),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None if os.environ.get("RLVR_SANDBOX_DEBUG") else subprocess.DEVNULL,
            env={"PATH": jobcore.PATH, "LANG": "C.UTF-8"},
            start_new_session=True,
            close_fds=True,
        )
        self.proc.stdin.write(jobcore.encode({"hello": True}))
        self.proc.stdin.flush()
        ready = self._read(timeout=20.0)
        if not (isinstance(ready, dict) and ready.get("ready")):
            self.stop()
            raise SandboxUnavailable(f"sandbox worker failed to start: {ready!r}")

    def _command(self, runtime: Path, cgroups: dict[str, str] | None) -> list[str]:
        args = ["bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
                "--die-with-parent", "--new-session", "--hostname", "sandbox",
                "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_CHOWN",
                "--cap-add", "CAP_DAC_OVERRIDE", "--cap-add", "CAP_FOWNER", "--cap-add", "CAP_KILL",
                "--ro-bind", "/usr", "/usr"]
        for name in MERGED_USR_LINKS:
            host = Path("/") / name
            if host.is_symlink():
                args += ["--symlink", os.readlink(host), f"/{name}"]
            elif host.is_dir():
                args += ["--ro-bind", str(host), f"/{name}"]
        for path in ETC_ALLOWLIST:
            if os.path.exists(path):
                args += ["--ro-bind", path, path]
        args += ["--ro-bind", str(runtime / "passwd"), "/etc/passwd", "--ro-bind", str(runtime / "group"), "/etc/group",
                 "--ro-bind", str(INSIDE_DIR), "/opt/rlvr", "--proc", "/proc", "--dev", "/dev",
                 "--size", str(self.disk_mb << 20), "--tmpfs", "/tmp"]
        inner_cg = ["-", "-", "-"]
        if cgroups:  # only the control files the worker uses, not the whole (partly world-writable) directory
            for ctl, names in CGROUP_FILES.items():
                for name in names:
                    host = os.path.join(cgroups[ctl], name)
                    if os.path.exists(host):
                        args += ["--bind", host, f"/sys/fs/cgroup/{ctl}/{name}"]
            inner_cg = ["/sys/fs/cgroup/memory", "/sys/fs/cgroup/pids", "-"]
        host_pidns = os.stat("/proc/self/ns/pid").st_ino
        return args + ["--chdir", "/", SANDBOX_PYTHON, "-I", "-S", "/opt/rlvr/worker.py", str(self.uid),
                       str(host_pidns), *inner_cg]

    def _read(self, timeout: float):
        fd = self.proc.stdout.fileno()
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            raise TimeoutError(f"sandbox worker {self.slot} did not answer within {timeout:.0f}s")
        return jobcore.recv_frame(fd)

    def call(self, spec: dict, timeout: float) -> dict:
        data = jobcore.encode(spec)
        self.proc.stdin.write(data)
        self.proc.stdin.flush()
        self.jobs += 1
        return self._read(timeout)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)  # bwrap's own session; the pid namespace dies with it
            except ProcessLookupError:
                pass
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass


class LocalSandbox(BaseSandbox):
    """Fast isolated execution on this machine. Thread-safe; ``workers`` jobs run at once."""

    name = "local"

    def __init__(self, workers: int | None = None, max_jobs: int = 500, cgroups: bool = True,
                 inline_python: bool = True):
        """``inline_python``: see ``spec.to_spec`` (speed vs. memory left over from earlier jobs)."""
        check_primitives()
        self.max_jobs = max_jobs
        self.inline_python = inline_python
        self.size = workers or max(2, os.cpu_count() or 2)
        self._runtime = Path(tempfile.mkdtemp(prefix="rlvr-sandbox-"))
        os.chmod(self._runtime, 0o755)
        self._uid_base = 1_000_000 + secrets.randbelow(1_000_000) * 64
        self._write_identity_files()
        self._cgroups = CgroupSlots() if cgroups else None
        self._idle: queue.LifoQueue[tuple[int, _Worker | None]] = queue.LifoQueue()
        self._all: dict[int, _Worker | None] = {}
        self._lock = threading.Lock()
        self._closed = False
        for slot in range(self.size):
            self._all[slot] = None
            self._idle.put((slot, None))

    def _write_identity_files(self) -> None:
        users = ["root:x:0:0:root:/root:/usr/sbin/nologin"]
        users += [f"sandbox{i}:x:{self._uid_base + i}:{self._uid_base + i}::{jobcore.JOB_DIR}:/usr/sbin/nologin"
                  for i in range(self.size)]
        groups = ["root:x:0:"] + [f"sandbox{i}:x:{self._uid_base + i}:" for i in range(self.size)]
        (self._runtime / "passwd").write_text("\n".join(users) + "\n")
        (self._runtime / "group").write_text("\n".join(groups) + "\n")
        for name in ("passwd", "group"):
            os.chmod(self._runtime / name, 0o644)

    def _start(self, slot: int, disk_mb: int) -> _Worker:
        cg = self._cgroups.slot(slot) if self._cgroups else None
        worker = _Worker(slot, self._uid_base + slot, self._runtime, cg, disk_mb)
        with self._lock:
            self._all[slot] = worker
        return worker

    def _acquire(self, limits: Limits) -> tuple[int, _Worker]:
        if self._closed:
            raise SandboxUnavailable("sandbox is closed")
        slot, worker = self._idle.get()
        try:
            if worker is not None and (not worker.alive() or worker.disk_mb != limits.disk_mb):
                worker.stop()
                worker = None
            if worker is None:
                worker = self._start(slot, limits.disk_mb)
        except BaseException:
            self._idle.put((slot, None))
            raise
        return slot, worker

    def _release(self, slot: int, worker: _Worker | None, recycle: bool) -> None:
        if worker is not None and (recycle or worker.jobs >= self.max_jobs or not worker.alive()):
            worker.stop()
            worker = None
        if self._closed and worker is not None:
            worker.stop()
            worker = None
        self._idle.put((slot, worker))

    def _run(self, request: ExecRequest) -> ExecResult:
        slot, worker = self._acquire(request.limits)
        recycle = True
        try:
            spec = specmod.to_spec(request, self.inline_python)
            raw = worker.call(spec, timeout=request.limits.wall_s + PROTOCOL_GRACE_S)
            recycle = bool(raw.get("dirty"))
        except (OSError, EOFError, TimeoutError, ValueError) as exc:
            return ExecResult(status=Status.SANDBOX_ERROR, error=f"worker failed: {type(exc).__name__}: {exc}",
                              backend=self.name)
        finally:
            self._release(slot, worker, recycle)
        return specmod.to_result(raw, self.name)

    def warm_up(self) -> None:
        """Start every worker now (otherwise they start on first use)."""
        taken = [self._acquire(Limits()) for _ in range(self.size)]
        for slot, worker in taken:
            self._release(slot, worker, recycle=False)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with self._lock:
            workers = [w for w in self._all.values() if w is not None]
        for worker in workers:
            worker.stop()
        deadline = time.monotonic() + 2
        while self._cgroups and time.monotonic() < deadline:
            self._cgroups.close()
            break
        shutil.rmtree(self._runtime, ignore_errors=True)
