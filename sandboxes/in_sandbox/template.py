"""The worker's handle on a clean template process (zygote.py): start it, have it fork a job, learn the exit."""

from __future__ import annotations

import os
import select
import socket
import subprocess
import sys

try:
    from .paths import PATH
except ImportError:
    from paths import PATH

ZYGOTE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "zygote.py")
START_TIMEOUT_S = 30.0


class TemplateError(RuntimeError):
    pass


class Template:
    """One zygote. ``hash_seed`` fixes PYTHONHASHSEED for every job forked from it (None: random)."""

    def __init__(self, hash_seed: str | None = None, seccomp: bool = True) -> None:
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = {"PATH": PATH, "LANG": "C.UTF-8"}
        if hash_seed is not None:
            env["PYTHONHASHSEED"] = hash_seed
        argv = [sys.executable, "-s", "-S", "-B", ZYGOTE, str(theirs.fileno())] + ([] if seccomp else ["--no-seccomp"])
        try:
            self.proc = subprocess.Popen(
                argv,
                env=env,
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                close_fds=True,
            )
        finally:
            theirs.close()
        if self._recv(START_TIMEOUT_S) != b"ready":
            self.stop()
            raise TemplateError("template process failed to start")

    @property
    def fileno(self) -> int:
        """Readable when the running job's main process has exited (the ``exit`` message)."""
        return self.sock.fileno()

    def _recv(self, timeout: float) -> bytes:
        ready, _, _ = select.select([self.sock], [], [], timeout)
        if not ready:
            raise TemplateError(f"template process did not answer within {timeout:.0f}s")
        return self.sock.recv(256)

    def spawn(self, fds: list[int]) -> int:
        """Fork a job child with these descriptors (see child.py for their order); its pid."""
        socket.send_fds(self.sock, [b"fork"], fds)
        reply = self._recv(START_TIMEOUT_S)
        if not reply.startswith(b"pid "):
            raise TemplateError(f"template refused the job: {reply[:200]!r}")
        return int(reply.split()[1])

    def prefork(self) -> None:
        """Let the template prepare the next job's process now (only once the slot's cgroups are empty)."""
        self.sock.send(b"prefork")

    def wait(self, timeout: float) -> tuple[int, float]:
        """(wait status, CPU seconds of the main process) once the job's main process is reaped."""
        reply = self._recv(timeout)
        if not reply.startswith(b"exit "):
            raise TemplateError(f"unexpected template message {reply[:200]!r}")
        _, status, cpu = reply.split()
        return int(status), float(cpu)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        self.sock.close()
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
