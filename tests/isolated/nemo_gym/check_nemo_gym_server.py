"""The NeMo Gym template against the real nemo-gym 0.4.0 package (run in .venv-nemo by
tests/integrations/test_isolated_trainers.py; nemo-gym declares Python >= 3.12 and is installed on 3.11 with
--ignore-requires-python, so this also checks that its server code runs here).

The template's `RlvrGymEnv` is built the way NeMo Gym's own tests build a resources server, and driven over HTTP
through the app NeMo Gym sets up (`setup_webserver`: its session middleware, `/reset`, `/step`), with responses
validated as NeMo Gym's `NeMoGymResponse` — the requests `gymnasium_agent` sends.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from pathlib import Path
from unittest.mock import MagicMock

import pytest
from fastapi.testclient import TestClient
from nemo_gym.base_resources_server import BaseResourcesServerConfig
from nemo_gym.openai_utils import NeMoGymResponse
from nemo_gym.server_utils import ServerClient

import rlvr_gym
from rlvr_gym.integrations.nemo_gym import write_jsonl

ROOT = Path(__file__).resolve().parents[3]
TEMPLATE = ROOT / "integrations" / "nemo_gym" / "resources_servers" / "rlvr_gym" / "app.py"


def template_class():
    spec = importlib.util.spec_from_file_location("rlvr_gym_nemo_template", TEMPLATE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.RlvrGymEnv


@pytest.fixture()
def client():
    config = BaseResourcesServerConfig(host="", port=0, entrypoint="", name="rlvr_gym")
    server = template_class()(config=config, server_client=MagicMock(spec=ServerClient))
    return TestClient(server.setup_webserver())


def response(output: list[dict]) -> dict:
    """A Responses API object, validated by NeMo Gym's own model."""
    body = {
        "id": "resp_1", "created_at": time.time(), "model": "policy", "object": "response", "output": output,
        "parallel_tool_calls": False, "tool_choice": "auto", "tools": [],
    }
    return NeMoGymResponse.model_validate(body).model_dump(mode="json")


def text(t: str) -> dict:
    return response([{"id": "m1", "type": "message", "role": "assistant", "status": "completed",
                      "content": [{"type": "output_text", "text": t, "annotations": []}]}])


def row_of(env_id: str, tmp_path: Path, index: int = 0) -> dict:
    path = write_jsonl(env_id, index + 1, tmp_path / "rows.jsonl")
    return json.loads(path.read_text().splitlines()[index])


def post(client, path: str, body: dict) -> dict:
    reply = client.post(path, json=body)
    assert reply.status_code == 200, reply.text
    return reply.json()


def test_single_turn_over_http(client, tmp_path):
    row = row_of("rlvr/MathStarter-v0", tmp_path, 1)
    oracle = rlvr_gym.make("rlvr/MathStarter-v0").get_task(1).reference_actions[0]
    assert post(client, "/reset", row)["info"]["task_id"] == row["task_id"]
    step = post(client, "/step", {"responses_create_params": row["responses_create_params"], "response": text(oracle)})
    assert step["reward"] == 1.0 and step["terminated"] and step["info"]["verdict"]["passed"]


def test_multi_turn_with_function_calls_and_isolated_sessions(client, tmp_path):
    row = row_of("rlvr/Sokoban-v0", tmp_path)
    moves = rlvr_gym.make("rlvr/Sokoban-v0").get_task(0).reference_actions[0]
    params = row["responses_create_params"]
    assert [t["name"] for t in params["tools"]] == ["play"]
    post(client, "/reset", row)
    first = post(client, "/step", {"responses_create_params": params, "response": text("hmm")})
    assert first["reward"] == 0.0 and not first["terminated"] and "#" in first["observation"]
    other = TestClient(client.app)  # a second rollout: its own cookie, its own env
    post(other, "/reset", row_of("rlvr/MathStarter-v0", tmp_path))
    call = response([{"type": "function_call", "name": "play", "arguments": json.dumps({"moves": moves}),
                      "call_id": "call_7", "id": "fc_1", "status": "completed"}])
    last = post(client, "/step", {"responses_create_params": params, "response": call, "reward": 5.0})
    assert last["terminated"] and last["info"]["tool_outputs"][0]["call_id"] == "call_7"
    assert last["info"]["verdict"]["passed"] and last["reward"] == last["info"]["verdict"]["reward"] < 5.0


def test_step_without_reset_is_refused(client, tmp_path):
    row = row_of("rlvr/MathStarter-v0", tmp_path)
    with pytest.raises(KeyError, match="unknown session"):
        client.post("/step", json={"responses_create_params": row["responses_create_params"], "response": text("1")})
