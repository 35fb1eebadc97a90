"""Local backend: a supervisor with warm workers inside bubblewrap, one fresh child of a clean template per job.

Isolation layers (outermost first):

* **bubblewrap**, run by root *without* a user namespace (a root-run user namespace maps the sandbox user to
  host uid 0): new pid, net, ipc, uts, mount and cgroup namespaces per slot; the root filesystem is an empty
  tmpfs with an allowlist bound read-only (``/usr`` and its merged-usr links, a few ``/etc`` files, the worker's
  code), a fresh ``/proc`` (remounted ``hidepid=invisible``) and ``/dev``, and size-limited tmpfs ``/tmp`` and
  ``/dev/shm`` (the job dir is ``/tmp/job``). The worker keeps only CAP_SETUID, CAP_SETGID, CAP_CHOWN,
  CAP_DAC_OVERRIDE, CAP_FOWNER and CAP_KILL (plus CAP_SYS_ADMIN/CAP_SETPCAP until /proc is remounted).
* **per-job cgroups** (``cgroups.py``): memory, pids, CPU time, CPU weight of the whole job; the job's end is a
  freeze + kill of its cgroup, checked empty before the slot takes another job.
* **per-job uid** (rotating within the slot's range, never 0), no capabilities, no-new-privs, rlimits, and a
  **seccomp** filter (``in_sandbox/seccomp_filter.py``) on every syscall ABI.
* **clean template**: each job is forked from a template interpreter that never received any job's data.

Workers are restarted after ``max_jobs`` jobs, when they die, or when a job's cleanup is not verified complete.
"""

from __future__ import annotations

import json
import os
import queue
import secrets
import select
import shutil
import signal
import subprocess
import tempfile
import threading
from pathlib import Path

from . import spec as specmod
from .base import BaseSandbox, ExecRequest, ExecResult, Limits, Status
from .cgroups import CgroupSlots
from .errors import SandboxUnavailable
from .in_sandbox import framing, job_lifecycle
from .in_sandbox.paths import JOB_DIR, PATH

SANDBOX_PYTHON = "/usr/bin/python3"
IN_SANDBOX_DIR = Path(__file__).resolve().parent / specmod.IN_SANDBOX_DIR_NAME
ETC_ALLOWLIST = ("/etc/ld.so.cache", "/etc/localtime", "/etc/alternatives", "/etc/mime.types")
MERGED_USR_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
PROTOCOL_GRACE_S = 15.0
WORKER_CAPS = (
    "CAP_SETUID",
    "CAP_SETGID",
    "CAP_CHOWN",
    "CAP_DAC_OVERRIDE",
    "CAP_FOWNER",
    "CAP_KILL",
    "CAP_SYS_ADMIN",
    "CAP_SETPCAP",
)  # the last two are dropped by the worker once /proc is remounted


def check_primitives() -> None:
    """Raise SandboxUnavailable naming what is missing (bubblewrap, Debian python3 + python3-seccomp)."""
    if shutil.which("bwrap") is None:
        raise SandboxUnavailable(
            "bubblewrap is not installed: run scripts/setup_sandbox.sh (apt-get install bubblewrap)"
        )
    if not os.access(SANDBOX_PYTHON, os.X_OK):
        raise SandboxUnavailable(f"{SANDBOX_PYTHON} is missing: apt-get install python3 (Debian's, readable by all)")
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

    def __init__(
        self,
        slot: int,
        uid_base: int,
        runtime: Path,
        cgroup_binds: dict[str, str] | None,
        disk_mb: int,
        options: dict | None = None,
    ):
        self.slot, self.disk_mb = slot, disk_mb
        self.jobs = 0
        self.proc = _Spawner.popen(
            self._command(runtime, cgroup_binds or {}, uid_base, options or {}),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None if os.environ.get("RLVR_SANDBOX_DEBUG") else subprocess.DEVNULL,
            env={"PATH": PATH, "LANG": "C.UTF-8"},
            start_new_session=True,
            close_fds=True,
        )
        self.proc.stdin.write(framing.encode({"hello": True}))
        self.proc.stdin.flush()
        try:
            ready = self._read(timeout=30.0)
        except (OSError, EOFError, TimeoutError, ValueError) as exc:
            ready = exc
        if not (isinstance(ready, dict) and ready.get("ready")):
            self.stop()
            raise SandboxUnavailable(f"sandbox worker failed to start: {ready!r} (RLVR_SANDBOX_DEBUG=1 shows why)")

    def _command(self, runtime: Path, cgroup_binds: dict[str, str], uid_base: int, options: dict) -> list[str]:
        size = str(self.disk_mb << 20)
        args = [
            "bwrap",
            "--unshare-pid",
            "--unshare-net",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--die-with-parent",
            "--new-session",
            "--hostname",
            "sandbox",
            "--cap-drop",
            "ALL",
        ]
        for cap in WORKER_CAPS:
            args += ["--cap-add", cap]
        args += ["--ro-bind", "/usr", "/usr"]
        for name in MERGED_USR_LINKS:
            host = Path("/") / name
            if host.is_symlink():
                args += ["--symlink", os.readlink(host), f"/{name}"]
            elif host.is_dir():
                args += ["--ro-bind", str(host), f"/{name}"]
        for path in ETC_ALLOWLIST:
            if os.path.exists(path):
                args += ["--ro-bind", path, path]
        args += [
            "--ro-bind",
            str(runtime / "passwd"),
            "/etc/passwd",
            "--ro-bind",
            str(runtime / "group"),
            "/etc/group",
            "--ro-bind",
            str(IN_SANDBOX_DIR),
            "/opt/rlvr",
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--size",
            size,
            "--tmpfs",
            "/tmp",
            "--size",
            size,
            "--tmpfs",
            "/dev/shm",
        ]
        for host, inside in cgroup_binds.items():  # only the control files the worker uses
            args += ["--bind", host, inside]
        host_pidns = os.stat("/proc/self/ns/pid").st_ino
        argv = [SANDBOX_PYTHON, "-I", "-S", "/opt/rlvr/worker.py", str(uid_base), str(host_pidns)]
        if options:
            argv.append(json.dumps(options))
        return args + ["--chdir", "/", *argv]

    def _read(self, timeout: float):
        fd = self.proc.stdout.fileno()
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            raise TimeoutError(f"sandbox worker {self.slot} did not answer within {timeout:.0f}s")
        return framing.recv_frame(fd)

    def call(self, spec: dict, timeout: float) -> dict:
        data = framing.encode(spec)
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

    def __init__(
        self,
        workers: int | None = None,
        max_jobs: int = 500,
        cgroups: bool = True,
        inline_python: bool = True,
        protections: dict | None = None,
    ):
        """``inline_python``: run ``code`` in the template's warm interpreter (see ``spec.to_spec``).

        ``protections``: switch single layers off (``hidepid``, ``seccomp``: False) -- for measuring what each
        costs (benchmarks/sandbox_throughput.py), never for real use.
        """
        check_primitives()
        self.max_jobs = max_jobs
        self.inline_python = inline_python
        self.protections = dict(protections or {})
        self.size = workers or min(job_lifecycle.MAX_SLOTS, max(2, os.cpu_count() or 2))
        if not 1 <= self.size <= job_lifecycle.MAX_SLOTS:
            raise ValueError(f"workers must be between 1 and {job_lifecycle.MAX_SLOTS}")
        self._runtime = Path(tempfile.mkdtemp(prefix="rlvr-sandbox-"))
        os.chmod(self._runtime, 0o755)
        # a random block of uids per instance (8000 blocks), so two sandboxes on one machine rarely share any
        self._uid_base = 1_000_000 + secrets.randbelow(8000) * job_lifecycle.UID_ROTATION * job_lifecycle.MAX_SLOTS
        self._write_identity_files()
        self._cgroups = CgroupSlots(self.size) if cgroups else None
        self._idle: queue.LifoQueue[tuple[int, _Worker | None]] = queue.LifoQueue()
        self._all: dict[int, _Worker | None] = {}
        self._lock = threading.Lock()
        self._closed = False
        for slot in range(self.size):
            self._all[slot] = None
            self._idle.put((slot, None))

    def slot_uids(self, slot: int) -> range:
        """The uids jobs of ``slot`` run as (one per job, rotating)."""
        base = self._uid_base + slot * job_lifecycle.UID_ROTATION
        return range(base, base + job_lifecycle.UID_ROTATION)

    def _write_identity_files(self) -> None:
        (self._runtime / "passwd").write_text(
            f"root:x:0:0:root:/root:/usr/sbin/nologin\n"
            f"sandbox:x:{self._uid_base}:{self._uid_base}::{JOB_DIR}:/usr/sbin/nologin\n"
        )
        (self._runtime / "group").write_text(f"root:x:0:\nsandbox:x:{self._uid_base}:\n")
        for name in ("passwd", "group"):
            os.chmod(self._runtime / name, 0o644)

    def _start(self, slot: int, disk_mb: int) -> _Worker:
        binds = self._cgroups.slot(slot) if self._cgroups else None
        worker = _Worker(slot, self.slot_uids(slot).start, self._runtime, binds, disk_mb, self._worker_options())
        with self._lock:
            self._all[slot] = worker
        return worker

    def _worker_options(self) -> dict:
        options = {k: bool(v) for k, v in self.protections.items() if k in ("hidepid", "seccomp")}
        if not self.inline_python:
            options["fast_code"] = False
        return options

    def _acquire(self, limits: Limits) -> tuple[int, _Worker]:
        if self._closed:
            raise SandboxUnavailable("sandbox is closed")
        slot, worker = self._idle.get()
        try:
            if worker is not None and (not worker.alive() or worker.disk_mb != limits.disk_mb):
                self._stop(slot, worker)
                worker = None
            if worker is None:
                worker = self._start(slot, limits.disk_mb)
        except BaseException:
            self._idle.put((slot, None))
            raise
        return slot, worker

    def _stop(self, slot: int, worker: _Worker) -> None:
        """Stop a worker (its pid namespace dies with it) and make sure nothing of it is left in the slot."""
        worker.stop()
        if self._cgroups is not None:
            self._cgroups.retire(slot)

    def _release(self, slot: int, worker: _Worker | None, recycle: bool) -> None:
        if worker is not None and (recycle or self._closed or worker.jobs >= self.max_jobs or not worker.alive()):
            self._stop(slot, worker)
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
            return ExecResult(
                status=Status.SANDBOX_ERROR, error=f"worker failed: {type(exc).__name__}: {exc}", backend=self.name
            )
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
        if self._cgroups:
            self._cgroups.close()
        shutil.rmtree(self._runtime, ignore_errors=True)
