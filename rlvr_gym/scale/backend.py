"""Choosing where a run's envs live, for front ends (`rlvr-gym eval --backend ray --ray-address ...`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .run import ray_collect_options
from .session import connect

BACKENDS = ("local", "ray")


@contextmanager
def run_backend(
    backend: str,
    env_id: str,
    env_kwargs: dict[str, Any] | None = None,
    *,
    address: str | None = None,
    isolation: str | None = None,
    reset_timeout_s: float | None = None,
    episode_timeout_s: float | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield the `collect` keyword arguments that place the envs: in this machine's runner ("local": isolation and
    limits as given) or in Ray actors ("ray": connected to `address`, or a private one-node Ray, for the block)."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if backend == "local":
        if address is not None:
            raise ValueError("a Ray address needs the Ray backend (--backend ray)")
        yield {"isolation": isolation, "reset_timeout_s": reset_timeout_s, "episode_timeout_s": episode_timeout_s}
        return
    if isolation not in (None, "thread"):
        raise ValueError(f"isolation {isolation!r} does not apply to the Ray backend: every env runs in its own actor")
    with connect(address):
        yield ray_collect_options(
            env_id, env_kwargs, reset_timeout_s=reset_timeout_s, episode_timeout_s=episode_timeout_s
        )
