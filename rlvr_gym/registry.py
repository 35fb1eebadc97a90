"""Env registry on top of Gymnasium's, with ids `rlvr/<Name>-v<N>` and plug-in discovery by entry points.

Built-in families register exactly like third-party packages: through the entry-point group `rlvr_gym.envs`,
whose objects are registration functions (or modules that register on import). Discovery runs once, lazily, on
the first `make`/`list_envs`, so `import rlvr_gym` stays cheap and the core never imports `envs/` itself.

Gymnasium users expect `import rlvr_gym; gymnasium.make("rlvr/Math-v0")` (Gymnasium 1.x dropped its own plug-in
loader). So at import every id named in the entry-point group `rlvr_gym.env_ids` (name: the id, value: the
function that registers it) goes into Gymnasium's registry as a cheap placeholder, `rlvr_gym.declared:<id>`, read
from package metadata alone; the first make through it runs the plug-ins and builds the env from the real spec.
"""

from __future__ import annotations

import importlib.metadata
import logging
import threading
from dataclasses import dataclass, field
from typing import Any

import gymnasium

from .plugins import ENVS as ENV_GROUP
from .plugins import entry_points

NAMESPACE = "rlvr"
ID_GROUP = "rlvr_gym.env_ids"  # id -> its registration function, for Gymnasium before any plug-in loads
DECLARED = "rlvr_gym.declared"  # the module whose attributes are the placeholders' creators

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


def declared_ids() -> set[str]:
    """The ids of `rlvr_gym.env_ids` across every installed distribution (a stale copy of a package's metadata on
    sys.path, such as a source tree's egg-info, may shadow the installed one, so no first-wins de-duplication)."""
    return {ep.name for dist in importlib.metadata.distributions() for ep in dist.entry_points
            if ep.group == ID_GROUP and ep.name.startswith(f"{NAMESPACE}/")}


def declare_ids() -> list[str]:
    """Put every declared id that Gymnasium does not know yet into its registry as a placeholder."""
    declared = []
    for name in sorted(declared_ids()):
        if name not in gymnasium.registry:
            gymnasium.register(id=name, entry_point=f"{DECLARED}:{name}", disable_env_checker=True)
            declared.append(name)
    return declared


try:
    declare_ids()
except Exception as exc:  # broken package metadata must not break `import rlvr_gym`; make() still loads plug-ins
    log.debug("could not declare env ids: %s", exc)
