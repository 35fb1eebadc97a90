"""The episode record's JSON Schema ships with the package, matches the model, and validates real records (#15.2)."""

import json

import jsonschema

from rlvr_gym.agents.scripted import ConstantAgent, OracleAgent
from rlvr_gym.rollout import collect_sync
from rlvr_gym.schemas import episode_schema, generate_episode_schema, render


def test_shipped_schema_is_up_to_date():
    shipped = episode_schema()
    assert render(shipped) == render(generate_episode_schema()), (
        "rlvr_gym/schemas/episode.schema.json is stale: run `python -m rlvr_gym.schemas.generate`"
    )
    assert shipped["properties"]["schema_version"]["default"] == 2
    assert "outcome" in shipped["properties"]


def test_written_records_validate_against_the_schema(trap_env_ids, tmp_path):
    out = tmp_path / "e.jsonl"
    collect_sync(trap_env_ids["trap"], OracleAgent(), tasks=3, output=out, env_kwargs={"infra_on": (1,)})
    collect_sync(trap_env_ids["trap"], ConstantAgent("x"), tasks=2, output=tmp_path / "f.jsonl")
    rows = [json.loads(line) for path in (out, tmp_path / "f.jsonl") for line in path.read_text().splitlines()]
    validator = jsonschema.Draft202012Validator(episode_schema())
    for row in rows:
        validator.validate(row)
    assert {row["outcome"] for row in rows} == {"scored", "error", "invalid"}
    bad = dict(rows[0], outcome="maybe")
    assert not validator.is_valid(bad)
