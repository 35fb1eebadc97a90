"""Container backend: warm containers through the Docker Engine API (``docker`` package; podman speaks it too).

Each slot is a long-lived container of a local image (see scripts/setup_sandbox.sh): no network, read-only
root, size-limited tmpfs ``/tmp``, ``/var/tmp`` and ``/dev/shm`` (wiped after every job), memory/swap and pids
limits, all capabilities dropped but the few the trusted runner needs, no-new-privs, and a reaping init as
PID 1. When the engine runs on this machine and we are root, the slot's per-job host cgroups (``cgroups.py``)
are bound in, exactly as for the local backend.

Two ways to run a job, both through the very same ``job_lifecycle.run_job`` as the local backend (clean template,
per-job uid and cgroup, hidepid /proc, rlimits, seccomp, freeze-and-kill and safe wipe after the job; sharing
that code is what makes both backends report the same ``ExecResult.status`` for the same request):

* ``persistent=True`` (default): one long-lived ``exec`` per container runs the warm worker
  (``in_sandbox/worker.py``); jobs go over the exec's attached stdin/stdout stream (Docker's multiplexed framing),
  so a job costs a fork inside the container, not an ``exec`` round trip through the engine (~150 ms on podman).
* ``persistent=False``: one ``exec`` of ``in_sandbox/runjob.py`` per job.

Containers are created on first use and re-created when a request needs different container-level limits
(memory, processes, disk), when the runner reports leftovers, or after ``max_jobs`` jobs.
"""

from __future__ import annotations

import base64
import io
import os
import queue
import secrets
import signal
import socket
import struct
import tarfile
import threading

from . import spec as specmod
from .base import BaseSandbox, ExecRequest, ExecResult, Limits, Status
from .cgroups import CgroupSlots
from .errors import SandboxUnavailable
from .in_sandbox import framing, job_lifecycle
from .in_sandbox.paths import PATH
from .local import IN_SANDBOX_DIR
from .podman import DEFAULT_IMAGE, ensure_service, image_present

RUNNER_CAPS = [
    "SETUID",
    "SETGID",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "KILL",
    "SYS_ADMIN",
    "SETPCAP",
]  # the last two are dropped by the worker once /proc is remounted
ENV_SPEC_MAX = 120_000  # one environment string may not exceed 128 KiB (MAX_ARG_STRLEN)
MEMORY_OVERHEAD_MB = 64  # the runner itself, on top of the job's limit
PROTOCOL_GRACE_S = 30.0


def _owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def remove_stale_containers(client) -> int:
    """Remove sandbox containers whose owning process (on this host) is gone; returns how many."""
    removed = 0
    host = socket.gethostname()
    for container in client.containers.list(all=True, filters={"label": "rlvr-gym.sandbox"}):
        owner = container.labels.get("rlvr-gym.owner", "")
        name, _, pid = owner.rpartition(":")
        if name == host and pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
            try:
                container.remove(force=True)
                removed += 1
            except Exception:
                pass
    return removed


def _container_key(limits: Limits) -> tuple[int, int, int]:
    return (limits.memory_mb, limits.processes, limits.disk_mb)


class _ExecStream:
    """The hijacked socket of an attached exec: Docker's 8-byte-header multiplexing, our frames inside."""

    def __init__(self, sock) -> None:
        self._holder = sock  # keeps docker-py's response (and so the connection) alive
        self.sock = getattr(sock, "_sock", sock)
        self.buf = bytearray()

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def _recv_exact(self, n: int) -> bytes:
        data = bytearray()
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise EOFError("container worker closed its stream")
            data += chunk
        return bytes(data)

    def _read(self, n: int) -> bytes:
        while len(self.buf) < n:
            header = self._recv_exact(8)
            payload = self._recv_exact(struct.unpack(">I", header[4:])[0])
            if header[0] == 1:  # stdout; the worker writes nothing else
                self.buf += payload
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    def recv_frame(self, timeout: float):
        self.sock.settimeout(timeout)
        (size,) = struct.unpack(">I", self._read(4))
        return framing.decode(self._read(size))

    def close(self, timeout: float = 2.0) -> None:
        """End the worker by EOF and wait for it to go, so the engine ends the exec session (and its conmon)."""
        try:
            self.sock.shutdown(socket.SHUT_WR)
            self.sock.settimeout(timeout)
            while self.sock.recv(65536):
                pass
        except OSError:
            pass
        try:
            self.sock.close()
        except OSError:
            pass


class _Slot:
    """One warm container and the client that talks to it."""

    def __init__(
        self,
        base_url: str,
        image: str,
        name: str,
        uids: range,
        limits: Limits,
        persistent: bool,
        host_pidns: int,
        cgroup_binds: dict[str, str] | None,
        cgroup_parent: str | None = None,
    ):
        import docker

        self.client = docker.DockerClient(base_url=base_url, timeout=int(limits.wall_s + PROTOCOL_GRACE_S + 30))
        self.uids = uids
        self.key = _container_key(limits)
        self.jobs = 0
        memory = f"{limits.memory_mb + MEMORY_OVERHEAD_MB}m"
        self.container = self.client.containers.run(
            image,
            ["/usr/bin/python3", "-I", "-S", "/opt/rlvr/init.py"],
            name=name,
            detach=True,
            network_mode="none",
            read_only=True,
            tmpfs={"/tmp": f"size={limits.disk_mb}m,mode=1777", "/var/tmp": f"size={limits.disk_mb}m,mode=1777"},
            shm_size=f"{max(1, limits.disk_mb)}m",
            mem_limit=memory,
            memswap_limit=memory,
            pids_limit=limits.processes + 16,
            cap_drop=["ALL"],
            cap_add=RUNNER_CAPS,
            security_opt=["no-new-privileges"],
            volumes={
                str(IN_SANDBOX_DIR): {"bind": "/opt/rlvr", "mode": "ro"},
                **{host: {"bind": inside, "mode": "rw"} for host, inside in (cgroup_binds or {}).items()},
            },
            cpu_shares=1024,
            **({"cgroup_parent": cgroup_parent} if cgroup_parent else {}),
            user="0:0",
            hostname="sandbox",
            working_dir="/",
            environment={"PATH": PATH},
            labels={"rlvr-gym.sandbox": "1", "rlvr-gym.owner": _owner()},
        )
        self.stream: _ExecStream | None = None
        if persistent:
            try:
                self.stream = self._start_worker(host_pidns)
            except BaseException:
                self.stop()
                raise

    def _start_worker(self, host_pidns: int) -> _ExecStream:
        argv = ["/usr/bin/python3", "-I", "-S", "/opt/rlvr/worker.py", str(self.uids.start), str(host_pidns)]
        api = self.client.api
        exec_id = api.exec_create(
            self.container.id, argv, stdin=True, stdout=True, stderr=False, tty=False, user="0:0"
        )["Id"]
        stream = _ExecStream(api.exec_start(exec_id, socket=True))
        stream.send(framing.encode({"hello": True}))
        ready = stream.recv_frame(timeout=60)
        if not (isinstance(ready, dict) and ready.get("ready")):
            raise SandboxUnavailable(f"container worker failed to start: {ready!r}")
        return stream

    def run(self, spec: dict, host_pidns: int) -> dict:
        self.jobs += 1
        if self.stream is not None:
            self.stream.send(framing.encode(spec))
            return self.stream.recv_frame(timeout=spec["limits"]["wall_s"] + PROTOCOL_GRACE_S)
        frame = framing.encode(spec)
        encoded = base64.b64encode(frame).decode()
        if len(encoded) < ENV_SPEC_MAX:
            env = {"RLVR_SPEC": encoded}
        else:
            name = f".rlvr-spec-{secrets.token_hex(8)}"
            self._put_root_file(f"/tmp/{name}", frame)
            env = {"RLVR_SPEC_FILE": f"/tmp/{name}"}
        uid = self.uids[(self.jobs - 1) % len(self.uids)]  # the one-shot runner rotates by the host's count
        argv = ["/usr/bin/python3", "-I", "-S", "/opt/rlvr/runjob.py", str(uid), str(host_pidns)]
        exit_code, output = self.container.exec_run(argv, environment=env, user="0:0", stdout=True, stderr=True)
        if exit_code != 0 or len(output) < 4:
            raise RuntimeError(f"runner exited {exit_code}: {output[-500:]!r}")
        return framing.decode(output[4:])

    def _put_root_file(self, path: str, data: bytes) -> None:
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            info = tarfile.TarInfo(os.path.basename(path))
            info.size, info.mode, info.uid, info.gid = len(data), 0o600, 0, 0
            tar.addfile(info, io.BytesIO(data))
        if not self.container.put_archive(os.path.dirname(path), buf.getvalue()):
            raise RuntimeError("put_archive failed")

    def stop(self) -> None:
        if self.stream is not None:
            self.stream.close()
        try:
            self.container.remove(force=True)
        except Exception:
            pass
        self.client.close()
        end_exec_monitors(self.container.id)


def end_exec_monitors(container_id: str) -> int:
    """Kill the engine's per-exec monitor processes (``conmon``) left behind for a removed container of ours.

    Podman keeps the monitor of an attached exec session alive after its container is force-removed; without
    this every recycled slot leaks two processes. Only processes whose command line names this container's id
    are touched, and only on this machine (a remote engine's are not visible here). Returns how many.
    """
    needle = b"\0-c\0" + container_id.encode() + b"\0"
    killed = 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/comm", "rb") as f:
                if f.read().strip() != b"conmon":
                    continue
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if needle not in f.read():
                    continue
            os.kill(int(name), signal.SIGKILL)
            killed += 1
        except OSError:
            pass
    return killed


class DockerSandbox(BaseSandbox):
    """Isolated execution in warm containers. Thread-safe; ``containers`` jobs run at once."""

    name = "docker"

    def __init__(
        self,
        image: str = DEFAULT_IMAGE,
        base_url: str | None = None,
        containers: int = 2,
        max_jobs: int = 500,
        persistent: bool = True,
        inline_python: bool = True,
        cgroups: bool = True,
    ):
        """``cgroups``: put each job in a per-slot host cgroup bound into its container (needs root and the engine
        on this machine); without it jobs fall back to the container's own limits and kill-by-uid."""
        try:
            import docker
        except ImportError as exc:
            raise SandboxUnavailable("the `docker` package is missing: pip install 'rlvr-gym[docker]'") from exc
        self.base_url = base_url or ensure_service()
        self.image = image
        self.max_jobs = max_jobs
        self.persistent = persistent
        self.inline_python = inline_python
        probe = docker.DockerClient(base_url=self.base_url, timeout=30)
        try:
            if not image_present(probe, image):
                raise SandboxUnavailable(f"image {image} not found at {self.base_url}: run scripts/setup_sandbox.sh")
            remove_stale_containers(probe)
        finally:
            probe.close()
        self._tag = f"rlvr-sbx-{os.getpid()}-{secrets.token_hex(3)}"
        # a random block above the local backend's range (which ends below 2.1e9); uid_t is 32-bit
        if not 1 <= containers <= job_lifecycle.MAX_SLOTS:
            raise ValueError(f"containers must be between 1 and {job_lifecycle.MAX_SLOTS}")
        self._uid_base = 2_150_000_000 + secrets.randbelow(8000) * job_lifecycle.UID_ROTATION * job_lifecycle.MAX_SLOTS
        self._cgroups = _local_cgroups(containers) if cgroups else None
        self._cgroup_parent = self._cgroups.container_parent(containers) if self._cgroups else None
        self._host_pidns = os.stat("/proc/self/ns/pid").st_ino
        self._idle: queue.LifoQueue[tuple[int, _Slot | None]] = queue.LifoQueue()
        self._live: dict[int, _Slot] = {}
        self._lock = threading.Lock()
        self._closed = False
        for slot in range(containers):
            self._idle.put((slot, None))

    def _acquire(self, limits: Limits) -> tuple[int, _Slot]:
        if self._closed:
            raise SandboxUnavailable("sandbox is closed")
        slot, box = self._idle.get()
        try:
            if box is not None and box.key != _container_key(limits):
                box.stop()
                if self._cgroups is not None:
                    self._cgroups.retire(slot)
                box = None
            if box is None:
                box = _Slot(
                    self.base_url,
                    self.image,
                    f"{self._tag}-{slot}-{secrets.token_hex(2)}",
                    self.slot_uids(slot),
                    limits,
                    self.persistent,
                    self._host_pidns,
                    self._cgroups.slot(slot) if self._cgroups else None,
                    self._cgroup_parent,
                )
                with self._lock:
                    self._live[slot] = box
        except BaseException:
            self._idle.put((slot, None))
            raise
        return slot, box

    def slot_uids(self, slot: int) -> range:
        """The uids jobs of ``slot`` run as (one per job, rotating)."""
        base = self._uid_base + slot * job_lifecycle.UID_ROTATION
        return range(base, base + job_lifecycle.UID_ROTATION)

    def _release(self, slot: int, box: _Slot, recycle: bool) -> None:
        if recycle or box.jobs >= self.max_jobs or self._closed:
            box.stop()
            if self._cgroups is not None:
                self._cgroups.retire(slot)
            with self._lock:
                self._live.pop(slot, None)
            self._idle.put((slot, None))
        else:
            self._idle.put((slot, box))

    def _run(self, request: ExecRequest) -> ExecResult:
        slot, box = self._acquire(request.limits)
        recycle = True
        try:
            raw = box.run(specmod.to_spec(request, self.inline_python), self._host_pidns)
            recycle = bool(raw.get("dirty"))
        except Exception as exc:
            why = f"container runner failed: {type(exc).__name__}: {exc}"
            return ExecResult(status=Status.SANDBOX_ERROR, error=why, backend=self.name)
        finally:
            self._release(slot, box, recycle)
        return specmod.to_result(raw, self.name)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with self._lock:
            boxes = list(self._live.values())
            self._live.clear()
        for box in boxes:
            box.stop()
        if self._cgroups is not None:
            self._cgroups.close()


def _local_cgroups(slots: int) -> CgroupSlots | None:
    """Host cgroups for the containers' jobs, when this process can make them (root, cgroup v1 here)."""
    if os.geteuid() != 0:
        return None
    try:
        return CgroupSlots(slots)
    except SandboxUnavailable:
        return None
