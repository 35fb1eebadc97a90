"""Gymnasium entry points for env ids declared before their family is imported: `rlvr_gym.declared:<env id>`.

Gymnasium loads a string entry point as `getattr(import_module(module), name)`, so this module answers every
`rlvr/...` attribute with a creator for that id (see `registry.declare_ids`). The creator runs the plug-ins, which
replace the placeholder with the real spec, and builds the env from that spec's entry point and default kwargs; later
makes go straight to the real spec.
"""

from __future__ import annotations

import functools
from typing import Any

import gymnasium
from gymnasium.envs.registration import load_env_creator

from .registry import DECLARED, NAMESPACE, env_info


def create(env_id: str, **kwargs: Any) -> gymnasium.Env:
    """Build `env_id` as its family registered it, `kwargs` over the registered defaults."""
    env_info(env_id)  # runs the plug-ins; a KeyError naming the broken plug-in when none registers the id
    spec = gymnasium.spec(env_id)
    entry = spec.entry_point
    if entry is None or (isinstance(entry, str) and entry.startswith(f"{DECLARED}:")):
        raise gymnasium.error.Error(f"{env_id} is declared but its plug-in registered no entry point for it")
    creator = entry if callable(entry) else load_env_creator(entry)
    return creator(**{**spec.kwargs, **kwargs})


def __getattr__(name: str) -> Any:
    if not name.startswith(f"{NAMESPACE}/"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return functools.partial(create, name)
