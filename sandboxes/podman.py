"""Find or start a Docker-API endpoint: a running Docker/podman socket, else ``podman system service``.

Used by the container backend, the tests and CI. ``ensure_service()`` returns a ``base_url`` for
``docker.DockerClient``. The service it starts is detached (it outlives this process, so later runs reuse it)
and listens on a unix socket only.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

from .errors import SandboxUnavailable

DEFAULT_SOCKET = "/run/rlvr-podman/podman.sock"
DEFAULT_IMAGE = "localhost/rlvr-gym-sandbox:bookworm"
CANDIDATES = ("/run/podman/podman.sock", "/var/run/docker.sock")


def _ping(base_url: str, timeout: float = 3.0) -> bool:
    try:
        import docker
    except ImportError as exc:
        raise SandboxUnavailable("the `docker` package is missing: pip install 'rlvr-gym[docker]'") from exc
    try:
        client = docker.DockerClient(base_url=base_url, timeout=timeout)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except Exception:
        return False


def ensure_service(socket_path: str | None = None, timeout: float = 30.0) -> str:
    """A reachable Docker-API base URL, starting podman's service on ``socket_path`` if nothing answers."""
    explicit = os.environ.get("RLVR_DOCKER_HOST") or os.environ.get("DOCKER_HOST")
    if explicit and socket_path is None:
        if _ping(explicit):
            return explicit
        raise SandboxUnavailable(f"no Docker API answers at {explicit} (from RLVR_DOCKER_HOST/DOCKER_HOST)")
    path = socket_path or DEFAULT_SOCKET
    for candidate in (path, *([] if socket_path else CANDIDATES)):
        if Path(candidate).exists() and _ping(f"unix://{candidate}"):
            return f"unix://{candidate}"
    if shutil.which("podman") is None:
        raise SandboxUnavailable(
            "podman is not installed and no Docker API socket answers: run "
            "scripts/setup_sandbox.sh (apt-get install podman runc)"
        )
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    log = open(Path(path).parent / "service.log", "ab")
    subprocess.Popen(
        ["podman", "system", "service", "--time=0", f"unix://{path}"],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        start_new_session=True,
        close_fds=True,
    )
    log.close()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if Path(path).exists() and _ping(f"unix://{path}"):
            return f"unix://{path}"
        time.sleep(0.2)
    raise SandboxUnavailable(
        f"podman system service did not come up on {path} within {timeout:.0f}s "
        f"(see {Path(path).parent / 'service.log'})"
    )


def image_present(client, image: str) -> bool:
    try:
        client.images.get(image)
        return True
    except Exception:
        return False
