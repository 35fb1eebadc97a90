"""Connecting this process to Ray without touching anybody else's Ray: loopback only, private temp dir, own token.

Three Ray defaults bite on a shared machine: a node started with 127.0.0.1 is re-addressed to the host's outward IP
(`RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0` keeps loopback); the cluster address is written to /tmp/ray, where any
`ray.init()` of another user would join it (`RAY_TMPDIR` moves it to a private folder); and token auth reads and
writes ~/.ray/auth_token unless the token comes from the environment. Every Ray process must see the same
settings, so they are set in `os.environ` before nodes start (children inherit them) and restored afterwards.

Closing never starts anything: Ray's implicit `ray.init()` (which any `ray.get`/`ray.kill` on a disconnected
process would do, starting a second, default Ray) is switched off for this process once it has used this module,
and closing a private Ray waits for (or kills) exactly the processes it started before removing its temp dir.
"""

from __future__ import annotations

import atexit
import logging
import os
import secrets
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..types import InfraError
from .cleanup import node_processes, reap, started_with

log = logging.getLogger(__name__)

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


class RayUnavailable(InfraError):
    """Ray is not installed or this process is not connected to a cluster."""


def import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise RayUnavailable("the Ray backend needs the `ray` extra: pip install 'rlvr-gym[ray]'") from exc
    try:  # no implicit ray.init(): a call on a closed session must fail, never start a second, default Ray
        ray._private.auto_init_hook.enable_auto_connect = False
    except AttributeError:
        log.warning("could not switch off Ray's implicit init; calls after close may start a default Ray")
    return ray


def connected_ray() -> Any | None:
    """Ray when this process is connected to it, else None (without importing Ray if nothing did)."""
    ray = sys.modules.get("ray")
    return ray if ray is not None and ray.is_initialized() else None


def is_loopback(address: str) -> bool:
    host = address.rsplit(":", 1)[0].strip("[]") if ":" in address else address
    return host in LOOPBACK_HOSTS


def loopback_environment(temp_dir: str) -> dict[str, str]:
    """The variables every process of a private loopback cluster needs (driver, nodes, workers)."""
    return {
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",  # node IP = 127.0.0.1, not the host's outward address
        "RAY_TMPDIR": temp_dir,  # the "current cluster" file goes here, not to /tmp/ray
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_ENABLE_AUTO_CONNECT": "0",  # no process of the cluster starts a Ray of its own
        **_auth_environment(),
    }


def _auth_environment() -> dict[str, str]:
    """Token auth with a per-process token from the environment, never ~/.ray/auth_token.

    Ray reads the auth mode once, when it is imported: set before that, every cluster this process starts uses
    one token (its nodes inherit it). If Ray was imported earlier without token mode, this process cannot speak
    token auth any more; the cluster then runs without it, reachable by other local users only (documented).
    """
    if "ray" in sys.modules:
        from ray._private.authentication.authentication_utils import AuthenticationMode, get_authentication_mode

        if get_authentication_mode() != AuthenticationMode.TOKEN:
            log.warning("Ray was imported before rlvr_gym.scale set token auth: this cluster runs without it")
            return {"RAY_AUTH_MODE": "disabled"}
    return {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": _process_token()}


_token: str | None = None


def _process_token() -> str:
    """One token per process: Ray caches the token it read, so every cluster started from here shares it."""
    global _token
    if _token is None:
        inherited = os.environ.get("RAY_AUTH_TOKEN") if os.environ.get("RAY_AUTH_MODE") == "token" else None
        _token = inherited or secrets.token_hex(32)
    return _token


@contextmanager
def environment(values: dict[str, str]) -> Iterator[None]:
    """Set `values` in os.environ (and Ray's already-imported constant) for the duration of the block."""
    saved = {key: os.environ.get(key) for key in values}
    imported = sys.modules.get("ray._private.ray_constants")
    saved_cluster_flag = imported.ENABLE_RAY_CLUSTER if imported is not None else None
    os.environ.update(values)
    constants = _ray_constants()  # imports Ray, now that the variables are set
    if constants is not None and values.get("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER") == "0":
        constants.ENABLE_RAY_CLUSTER = False  # read at import time, so patch it if Ray was imported before us
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        if constants is not None:
            default = not constants.IS_WINDOWS_OR_OSX
            constants.ENABLE_RAY_CLUSTER = saved_cluster_flag if saved_cluster_flag is not None else default


def _ray_constants() -> Any:
    try:
        from ray._private import ray_constants
    except ImportError:
        return None
    return ray_constants


def private_temp_dir() -> str:
    """A short private folder (Ray puts Unix sockets under it, whose paths must stay under ~100 bytes)."""
    path = tempfile.mkdtemp(prefix="rlvr-ray-", dir="/tmp")
    os.mkdir(os.path.join(path, "ray"))  # where Ray writes the "current cluster" file under RAY_TMPDIR
    return path


class RaySession:
    """This process's connection to Ray; `close` disconnects and stops the processes a local start began."""

    def __init__(self, address: str | None = None, *, num_cpus: int | None = None) -> None:
        target = address or "local"
        self._temp_dir = private_temp_dir() if target == "local" else None
        values: dict[str, str] = {}
        if self._temp_dir is not None:
            values = loopback_environment(self._temp_dir)
        elif is_loopback(target):
            values = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}  # token and temp dir: the cluster's own settings
        self._env: Any = environment(values)
        self._env.__enter__()  # before Ray is imported: it reads some of these once, at import
        try:
            ray = import_ray()
            if ray.is_initialized():
                raise RayUnavailable("this process is already connected to Ray; close that session first")
            options: dict[str, Any] = {"address": target, "log_to_driver": False, "configure_logging": False}
            if self._temp_dir is not None:
                options |= {"include_dashboard": False, "_temp_dir": self._temp_dir, "num_cpus": num_cpus}
            if self._temp_dir is not None or is_loopback(target):
                options["_node_ip_address"] = "127.0.0.1"
            ray.init(**options)
        except BaseException:
            self._restore()  # never close(): when already connected, that Ray belongs to another session
            raise
        atexit.register(self.close)  # an exception or exit that skips `with` still stops it all
        self.address: str = ray.get_runtime_context().gcs_address

    def close(self) -> None:
        """Disconnect (stopping a private Ray and every process it started), then restore the environment and
        remove the temp dir; safe to call twice, and never starts Ray."""
        atexit.unregister(self.close)
        ray = connected_ray()
        if ray is not None:
            node = ray._private.worker._global_node if self._temp_dir is not None else None
            started = node_processes([node]) if node is not None else []
            ray.shutdown()
            if self._temp_dir is not None:  # and what the tree missed: late or orphaned workers of this cluster
                started = list(dict.fromkeys([*started, *started_with("RAY_TMPDIR", self._temp_dir)]))
            reap(started)
        self._restore()

    def _restore(self) -> None:
        if self._env is not None:
            self._env.__exit__(None, None, None)
            self._env = None
        self._remove_temp_dir()

    def _remove_temp_dir(self) -> None:
        if self._temp_dir is not None:
            shutil.rmtree(self._temp_dir, ignore_errors=True)
            self._temp_dir = None

    def __enter__(self) -> RaySession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def connect(address: str | None = None, *, num_cpus: int | None = None) -> RaySession:
    """Join the Ray cluster at `address` (host:port of its GCS), or start a private one-node Ray on loopback when
    `address` is None or "local". Never Ray Client (`ray://`): it is not supported here."""
    if address is not None and address.startswith("ray://"):
        raise ValueError("Ray Client addresses (ray://) are not supported; give the cluster's GCS host:port")
    return RaySession(address, num_cpus=num_cpus)
