"""Env registry on top of Gymnasium's, with ids `rlvr/<Name>-v<N>` and plug-in discovery by entry points.

Built-in families register exactly like third-party packages: through the entry-point group `rlvr_gym.envs`,
whose objects are registration functions (or modules that register on import). Discovery runs once, lazily, on
the first `make`/`list_envs`, so `import rlvr_gym` stays cheap and the core never imports `envs/` itself.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Any

import gymnasium

from .plugins import ENVS as ENV_GROUP
from .plugins import entry_points

NAMESPACE = "rlvr"

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EnvInfo:
    id: str
    entry_point: str
    family: str = ""
    description: str = ""
    defaults: dict[str, Any] = field(default_factory=dict)


_envs: dict[str, EnvInfo] = {}
_plugin_errors: dict[str, str] = {}
_loaded = False
_lock = threading.RLock()


def register(
    id: str, entry_point: str | Any, *, family: str = "", description: str = "", **defaults: Any
) -> EnvInfo:
    """Register an env id (`rlvr/Name-v0`) pointing at `"module:Class"` (or a class), with default kwargs."""
    if not id.startswith(f"{NAMESPACE}/"):
        raise ValueError(f"env ids live in the {NAMESPACE!r} namespace, e.g. 'rlvr/Name-v0'; got {id!r}")
    if isinstance(entry_point, str):
        target = entry_point
    else:
        target = f"{entry_point.__module__}:{entry_point.__qualname__}"
    with _lock:
        if id in gymnasium.registry:
            del gymnasium.registry[id]
        gymnasium.register(id=id, entry_point=entry_point, kwargs=dict(defaults), disable_env_checker=True)
        info = EnvInfo(id=id, entry_point=target, family=family, description=description, defaults=dict(defaults))
        _envs[id] = info
    return info


def load_plugins(force: bool = False) -> dict[str, str]:
    """Run every `rlvr_gym.envs` entry point once; returns {entry point: error} for the ones that failed."""
    global _loaded
    with _lock:
        if _loaded and not force:
            return dict(_plugin_errors)
        _loaded = True
        for ep in entry_points(ENV_GROUP).values():
            try:
                obj = ep.load()
                if callable(obj):
                    obj()
            except Exception as exc:  # a broken plug-in must not hide the others
                _plugin_errors[ep.name] = f"{type(exc).__name__}: {exc}"
                log.debug("env plug-in %s failed to load: %s", ep.name, exc)
        return dict(_plugin_errors)


def list_envs() -> list[EnvInfo]:
    load_plugins()
    return sorted(_envs.values(), key=lambda info: info.id)


def env_info(id: str) -> EnvInfo:
    load_plugins()
    if id not in _envs:
        known = ", ".join(sorted(_envs)) or "none"
        broken = "".join(f"; plug-in {name} failed: {err}" for name, err in sorted(_plugin_errors.items()))
        raise KeyError(f"unknown env id {id!r}; registered: {known}{broken}")
    return _envs[id]


def make(id: str, **kwargs: Any):
    """Instantiate a registered env (unwrapped: our envs enforce their own turn limits)."""
    env_info(id)
    return gymnasium.make(id, **kwargs).unwrapped
