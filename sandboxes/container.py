"""Container backend: warm containers through the Docker Engine API (``docker`` package; podman speaks it too).

Each slot is a long-lived container of a local image (see scripts/setup_sandbox.sh): no network, read-only
root, a size-limited tmpfs ``/tmp``, memory/swap and pids limits, all capabilities dropped but the few the
trusted runner needs, no-new-privs, and a reaping init as PID 1.

Two ways to run a job, both through the very same ``jobcore.run_job`` as the local backend (per-slot uid,
rlimits, seccomp, kill-everything-of-the-uid and wipe after the job; sharing that code is what makes both
backends report the same ``ExecResult.status`` for the same request):

* ``persistent=True`` (default): one long-lived ``exec`` per container runs the warm worker
  (``_inside/worker.py``); jobs go over the exec's attached stdin/stdout stream (Docker's multiplexed framing),
  so a job costs a fork inside the container, not an ``exec`` round trip through the engine (~150 ms on podman).
* ``persistent=False``: one ``exec`` of ``_inside/runjob.py`` per job.

Containers are created on first use and re-created when a request needs different container-level limits
(memory, processes, disk), when the runner reports leftovers, or after ``max_jobs`` jobs.
"""

from __future__ import annotations

import base64
import io
import os
import queue
import secrets
import socket
import struct
import tarfile
import threading

from . import spec as specmod
from ._inside import jobcore
from .base import BaseSandbox, ExecRequest, ExecResult, Limits, Status
from .errors import SandboxUnavailable
from .local import INSIDE_DIR
from .podman import DEFAULT_IMAGE, ensure_service, image_present

RUNNER_CAPS = ["SETUID", "SETGID", "CHOWN", "DAC_OVERRIDE", "FOWNER", "KILL"]
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
        return jobcore.decode(self._read(size))

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


class _Slot:
    """One warm container and the client that talks to it."""

    def __init__(self, base_url: str, image: str, name: str, uid: int, limits: Limits, persistent: bool,
                 host_pidns: int):
        import docker

        self.client = docker.DockerClient(base_url=base_url, timeout=int(limits.wall_s + PROTOCOL_GRACE_S + 30))
        self.uid = uid
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
            tmpfs={"/tmp": f"size={limits.disk_mb}m,mode=1777"},
            shm_size=f"{max(1, limits.disk_mb)}m",
            mem_limit=memory,
            memswap_limit=memory,
            pids_limit=limits.processes + 16,
            cap_drop=["ALL"],
            cap_add=RUNNER_CAPS,
            security_opt=["no-new-privileges"],
            volumes={str(INSIDE_DIR): {"bind": "/opt/rlvr", "mode": "ro"}},
            user="0:0",
            hostname="sandbox",
            working_dir="/",
            environment={"PATH": jobcore.PATH},
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
        oom = "/sys/fs/cgroup/memory/memory.oom_control"
        argv = ["/usr/bin/python3", "-I", "-S", "/opt/rlvr/worker.py", str(self.uid), str(host_pidns), "-", "-", oom]
        api = self.client.api
        exec_id = api.exec_create(self.container.id, argv, stdin=True, stdout=True, stderr=False, tty=False,
                                  user="0:0")["Id"]
        stream = _ExecStream(api.exec_start(exec_id, socket=True))
        stream.send(jobcore.encode({"hello": True}))
        ready = stream.recv_frame(timeout=60)
        if not (isinstance(ready, dict) and ready.get("ready")):
            raise SandboxUnavailable(f"container worker failed to start: {ready!r}")
        return stream

    def run(self, spec: dict, host_pidns: int) -> dict:
        self.jobs += 1
        if self.stream is not None:
            self.stream.send(jobcore.encode(spec))
            return self.stream.recv_frame(timeout=spec["limits"]["wall_s"] + PROTOCOL_GRACE_S)
        frame = jobcore.encode(spec)
        encoded = base64.b64encode(frame).decode()
        if len(encoded) < ENV_SPEC_MAX:
            env = {"RLVR_SPEC": encoded}
        else:
            name = f".rlvr-spec-{secrets.token_hex(8)}"
            self._put_root_file(f"/tmp/{name}", frame)
            env = {"RLVR_SPEC_FILE": f"/tmp/{name}"}
        argv = ["/usr/bin/python3", "-I", "-S", "/opt/rlvr/runjob.py", str(self.uid), str(host_pidns)]
        exit_code, output = self.container.exec_run(argv, environment=env, user="0:0", stdout=True, stderr=True)
        if exit_code != 0 or len(output) < 4:
            raise RuntimeError(f"runner exited {exit_code}: {output[-500:]!r}")
        return jobcore.decode(output[4:])

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


class DockerSandbox(BaseSandbox):
    """Isolated execution in warm containers. Thread-safe; ``containers`` jobs run at once."""

    name = "docker"

    def __init__(self, image: str = DEFAULT_IMAGE, base_url: str | None = None, containers: int = 2,
                 max_jobs: int = 500, persistent: bool = True, inline_python: bool = True):
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
        self._uid_base = 3_000_000 + secrets.randbelow(1_000_000) * 64
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
                box = None
            if box is None:
                box = _Slot(self.base_url, self.image, f"{self._tag}-{slot}-{secrets.token_hex(2)}",
                            self._uid_base + slot, limits, self.persistent, self._host_pidns)
                with self._lock:
                    self._live[slot] = box
        except BaseException:
            self._idle.put((slot, None))
            raise
        return slot, box

    def _release(self, slot: int, box: _Slot, recycle: bool) -> None:
        if recycle or box.jobs >= self.max_jobs or self._closed:
            box.stop()
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
