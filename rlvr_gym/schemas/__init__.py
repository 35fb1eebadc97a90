"""JSON Schemas of the records rlvr-gym writes, shipped with the package for readers in other languages.

`episode.schema.json` describes one line of an episodes JSONL (`rlvr_gym.types.Episode`, serialization form, so it
includes the computed `outcome`). It is generated from the pydantic model; regenerate after changing the model:

    python -m rlvr_gym.schemas.generate
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

EPISODE_SCHEMA_FILE = "episode.schema.json"


def generate_episode_schema() -> dict[str, Any]:
    from ..types import EPISODE_SCHEMA_VERSION, Episode

    schema = Episode.model_json_schema(mode="serialization")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://rlvr-gym/schemas/episode-v{EPISODE_SCHEMA_VERSION}.json"
    return schema


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def episode_schema() -> dict[str, Any]:
    """The shipped schema (what readers should validate against)."""
    return json.loads(resources.files(__name__).joinpath(EPISODE_SCHEMA_FILE).read_text(encoding="utf-8"))


def write_episode_schema() -> Path:
    path = Path(__file__).with_name(EPISODE_SCHEMA_FILE)
    path.write_text(render(generate_episode_schema()), encoding="utf-8")
    return path
