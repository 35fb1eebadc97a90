"""Running the ordinary runner with its envs on Ray: the keyword arguments that switch `collect` over."""

from __future__ import annotations

from typing import Any

from ..agent import Agent
from ..rollout import collect_sync, env_class_limits
from ..types import Episode
from .remote_env import Placement, RayEnvFactory


def ray_collect_options(
    env_id: str,
    env_kwargs: dict[str, Any] | None = None,
    placement: Placement | None = None,
    *,
    reset_timeout_s: float | None = None,
    episode_timeout_s: float | None = None,
) -> dict[str, Any]:
    """Keyword arguments for `collect`/`collect_sync`/`Runner` that host every env instance in a Ray actor (pass
    `env_kwargs` to `collect` too: the run manifest records them).

    The runner sees each actor through an in-process proxy (isolation "thread"); the step limit is the remote
    env's own, and the reset and episode limits are read from the env class here, as a local run would.
    """
    factory = RayEnvFactory.from_registry(env_id, env_kwargs, placement)
    declared = env_class_limits(factory.recipe)
    return {
        "env_factory": factory,
        "isolation": "thread",
        "reset_timeout_s": reset_timeout_s if reset_timeout_s is not None else declared.reset_s,
        "episode_timeout_s": episode_timeout_s if episode_timeout_s is not None else declared.episode_s,
    }


def collect_on_ray(
    env_id: str,
    agent: Agent,
    *,
    env_kwargs: dict[str, Any] | None = None,
    placement: Placement | None = None,
    reset_timeout_s: float | None = None,
    episode_timeout_s: float | None = None,
    **collect_kwargs: Any,
) -> list[Episode]:
    """`collect_sync` with env actors on the Ray cluster this process is connected to (`connect` first)."""
    options = ray_collect_options(
        env_id, env_kwargs, placement, reset_timeout_s=reset_timeout_s, episode_timeout_s=episode_timeout_s
    )
    return collect_sync(env_id, agent, env_kwargs=env_kwargs, **options, **collect_kwargs)
