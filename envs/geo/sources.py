"""The registry of scene sources by name (procedural, osm, neon); each caches its scenes by (source, seed)."""

from __future__ import annotations

from rlvr_gym.types import EnvUnavailable

from .real import NeonScenes, OsmScenes
from .scene import ProceduralScenes, SceneSource

SOURCES: dict[str, SceneSource] = {"procedural": ProceduralScenes(), "osm": OsmScenes(), "neon": NeonScenes()}


def get_source(name: str) -> SceneSource:
    """The named source, or EnvUnavailable (with the setup command) when its data is not on this machine."""
    if name not in SOURCES:
        raise ValueError(f"scene source must be one of {sorted(SOURCES)}, got {name!r}")
    source = SOURCES[name]
    reason = source.available()
    if reason is not None:
        raise EnvUnavailable(reason)
    return source
