"""Isolated code execution: one protocol (``base``), a fast local backend and a container backend.

    from rlvr_gym.sandboxes import ExecRequest, Limits, get_sandbox
    result = get_sandbox("local").run(ExecRequest(code="print(1 + 1)", limits=Limits(wall_s=5)))
    result = await get_sandbox("docker").arun(ExecRequest(argv=["python3", "-c", "print(2)"]))

``get_sandbox`` returns a process-wide shared instance per (backend, options), safe to use from many threads
and from asyncio; it is closed at interpreter exit. ``create_sandbox`` makes a private one (close it yourself).
The default backend is ``$RLVR_SANDBOX`` or ``local``.
"""

from __future__ import annotations

import atexit
import os
import threading

from .base import (
    EVIDENCE_CLIENT,
    NONCE_ENV,
    BaseSandbox,
    ExecRequest,
    ExecResult,
    Limits,
    Sandbox,
    Status,
    extract_evidence,
)
from .errors import SandboxUnavailable

__all__ = [
    "EVIDENCE_CLIENT",
    "NONCE_ENV",
    "BaseSandbox",
    "ExecRequest",
    "ExecResult",
    "Limits",
    "Sandbox",
    "SandboxUnavailable",
    "Status",
    "backend_name",
    "create_sandbox",
    "extract_evidence",
    "get_sandbox",
    "BACKENDS",
]

BACKENDS = ("local", "docker")
_ALIASES = {"container": "docker", "podman": "docker"}
_shared: dict[tuple, Sandbox] = {}
_lock = threading.Lock()


def backend_name(backend: str | None = None) -> str:
    """The canonical backend name: ``backend``, else ``$RLVR_SANDBOX``, else ``local``; aliases resolved."""
    name = backend or os.environ.get("RLVR_SANDBOX") or "local"
    return _ALIASES.get(name, name)


def create_sandbox(backend: str | None = None, **options) -> Sandbox:
    """A new sandbox of the named backend (``local`` or ``docker``/``container``/``podman``)."""
    name = backend_name(backend)
    if name == "local":
        from .local import LocalSandbox

        return LocalSandbox(**options)
    if name == "docker":
        from .container import DockerSandbox

        return DockerSandbox(**options)
    raise ValueError(f"unknown sandbox backend {backend!r}; choose from {BACKENDS}")


def get_sandbox(backend: str | None = None, **options) -> Sandbox:
    """The process-wide shared sandbox for (backend, options), created on first use."""
    key = (backend_name(backend), tuple(sorted(options.items())))
    with _lock:
        box = _shared.get(key)
        if box is None:
            box = _shared[key] = create_sandbox(key[0], **options)
        return box


@atexit.register
def close_all() -> None:
    """Close every shared sandbox (also registered at exit)."""
    with _lock:
        boxes = list(_shared.values())
        _shared.clear()
    for box in boxes:
        box.close()
