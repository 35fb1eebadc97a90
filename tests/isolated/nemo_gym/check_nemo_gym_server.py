"""The NeMo Gym template against the real nemo-gym 0.4.0 package (run in .venv-nemo by
tests/integrations/test_isolated_trainers.py; nemo-gym declares Python >= 3.12 and is installed on 3.11 with
--ignore-requires-python, so this also checks that its server and agent code run here).

The template's `RlvrGymEnv` is built the way NeMo Gym's own tests build a resources server and served through the
app NeMo Gym sets up (`setup_webserver`: its session middleware, `/reset`, `/step`). Whole rollouts run through
NeMo Gym's own `GymnasiumAgent.run` (configured from the template's YAML) with a scripted policy in place of the
model server: its requests to the resources server go over HTTP as the JSON its `ServerClient` would send, with
the cookies it keeps. The template's YAML and JSONL rows are checked with NeMo Gym's own validators.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from unittest.mock import MagicMock

import orjson
import pytest
from fastapi.testclient import TestClient
from nemo_gym.config_types import maybe_get_server_instance_config
from nemo_gym.openai_utils import NeMoGymResponse
from nemo_gym.server_utils import ServerClient
from nemo_gym.train_data_utils import compute_sample_metrics
from omegaconf import OmegaConf
from pydantic import BaseModel
from responses_api_agents.gymnasium_agent.app import GymnasiumAgent, GymnasiumAgentConfig, GymnasiumAgentRunRequest

import rlvr_gym
from rlvr_gym.integrations.nemo_gym import write_jsonl

ROOT = Path(__file__).resolve().parents[3]
TEMPLATE_DIR = ROOT / "integrations" / "nemo_gym" / "resources_servers" / "rlvr_gym"
CONFIG = OmegaConf.load(TEMPLATE_DIR / "configs" / "rlvr_gym.yaml")
MATH, SOKOBAN = "rlvr/MathStarter-v0", "rlvr/Sokoban-v0"


def template_module():
    spec = importlib.util.spec_from_file_location("rlvr_gym_nemo_template", TEMPLATE_DIR / "app.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


TEMPLATE = template_module()


def make_server(**overrides: Any):
    """The template server, configured from its YAML entry (as `run_webserver` would, without a head server)."""
    inner = OmegaConf.to_container(CONFIG["rlvr_gym"]["resources_servers"]["rlvr_gym"])
    config = TEMPLATE.RlvrGymEnvConfig.model_validate({**inner, "host": "", "port": 0, "name": "rlvr_gym", **overrides})
    return TEMPLATE.RlvrGymEnv(config=config, server_client=MagicMock(spec=ServerClient))


@pytest.fixture()
def client():
    return TestClient(make_server().setup_webserver())


def response(output: list[dict]) -> dict:
    """A Responses API object, validated by NeMo Gym's own model."""
    body = {
        "id": "resp_1",
        "created_at": time.time(),
        "model": "policy",
        "object": "response",
        "output": output,
        "parallel_tool_calls": False,
        "tool_choice": "auto",
        "tools": [],
    }
    return NeMoGymResponse.model_validate(body).model_dump(mode="json")


def message_item(t: str) -> dict:
    return {
        "id": "m1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": t, "annotations": []}],
    }


def call_item(name: str, arguments: str, call_id: str) -> dict:
    return {
        "type": "function_call",
        "name": name,
        "arguments": arguments,
        "call_id": call_id,
        "id": f"fc_{call_id}",
        "status": "completed",
    }


def text(t: str) -> dict:
    return response([message_item(t)])


def rows_of(env_id: str, n: int, tmp_path: Path) -> list[dict]:
    path = write_jsonl(env_id, n, tmp_path / f"{env_id.replace('/', '_')}.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


def oracle(env_id: str, index: int) -> str:
    return rlvr_gym.make(env_id).get_task(index).reference_actions[0]


def post(client, path: str, body: dict) -> dict:
    reply = client.post(path, json=body)
    assert reply.status_code == 200, reply.text
    return reply.json()


# ---- the server over HTTP, requests built by hand ------------------------------------------------------------------
def test_single_turn_over_http(client, tmp_path):
    row = rows_of(MATH, 2, tmp_path)[1]
    assert post(client, "/reset", row)["info"]["task_id"] == row["task_id"]
    step = post(
        client, "/step", {"responses_create_params": row["responses_create_params"], "response": text(oracle(MATH, 1))}
    )
    assert step["reward"] == 1.0 and step["terminated"] and step["info"]["verdict"]["passed"]


def test_multi_turn_with_function_calls_and_isolated_sessions(client, tmp_path):
    row = rows_of(SOKOBAN, 1, tmp_path)[0]
    params = row["responses_create_params"]
    assert [t["name"] for t in params["tools"]] == ["play"]
    post(client, "/reset", row)
    first = post(client, "/step", {"responses_create_params": params, "response": text("hmm")})
    assert first["reward"] == 0.0 and not first["terminated"] and "#" in first["observation"]
    other = TestClient(client.app)  # a second rollout: its own cookie, its own env
    post(other, "/reset", rows_of(MATH, 1, tmp_path)[0])
    call = response([call_item("play", json.dumps({"moves": oracle(SOKOBAN, 0)}), "call_7")])
    last = post(client, "/step", {"responses_create_params": params, "response": call, "reward": 5.0})
    assert last["terminated"] and last["info"]["tool_outputs"][0]["call_id"] == "call_7"
    assert last["info"]["verdict"]["passed"] and last["reward"] == last["info"]["verdict"]["reward"] < 5.0


def test_step_without_reset_is_refused(client, tmp_path):
    row = rows_of(MATH, 1, tmp_path)[0]
    with pytest.raises(KeyError, match="unknown session"):
        client.post("/step", json={"responses_create_params": row["responses_create_params"], "response": text("1")})


# ---- whole rollouts through NeMo Gym's own gymnasium_agent ---------------------------------------------------------
class Reply:
    """What `GymnasiumAgent` reads of aiohttp's ClientResponse: ok, status, cookies (set by this reply), body."""

    def __init__(self, body: bytes, cookies: dict[str, str]) -> None:
        self.ok, self.status, self.cookies, self._body = True, 200, cookies, body

    async def read(self) -> bytes:
        return self._body


class Policy:
    """A scripted model server: one list of output items per `/v1/responses` call; records each request."""

    def __init__(self, turns: list[list[dict]]) -> None:
        self.turns, self.requests = list(turns), []

    def __call__(self, payload: dict) -> dict:
        self.requests.append(payload)
        return response(self.turns.pop(0))


def make_agent(app, policy: Policy, **overrides: Any) -> GymnasiumAgent:
    """NeMo Gym's gymnasium_agent from the template's YAML; its server client routes `/v1/responses` to `policy`
    and `/reset`, `/step` over HTTP to `app`, as the JSON ServerClient sends (BaseModel -> model_dump(
    exclude_unset=True), orjson) and with only the cookies the agent passes (a fresh cookie jar per request)."""
    inner = OmegaConf.to_container(CONFIG["rlvr_gym_agent"]["responses_api_agents"]["gymnasium_agent"])
    config = GymnasiumAgentConfig.model_validate(
        {**inner, "host": "", "port": 0, "name": "rlvr_gym_agent", **overrides}
    )
    agent = GymnasiumAgent(config=config, server_client=MagicMock(spec=ServerClient))

    async def post(server_name: str, url_path: str, json: Any = None, cookies: Any = None, **_: Any) -> Reply:
        body = orjson.dumps(json.model_dump(exclude_unset=True) if isinstance(json, BaseModel) else json)
        if server_name == config.model_server.name:
            assert url_path == "/v1/responses"
            return Reply(orjson.dumps(policy(orjson.loads(body))), {})
        assert server_name == config.resources_server.name == "rlvr_gym" and url_path in ("/reset", "/step")
        http = TestClient(app)
        http.cookies.update({k: getattr(v, "value", v) for k, v in dict(cookies or {}).items()})
        reply = http.post(url_path, content=body, headers={"content-type": "application/json"})
        assert reply.status_code == 200, reply.text
        return Reply(reply.content, dict(reply.cookies))

    agent.server_client.post = post
    return agent


def run(agent: GymnasiumAgent, row: dict, index: int) -> Any:
    """One `/run` of a JSONL row, with the fields NeMo Gym's rollout collection adds to it."""
    request = MagicMock()
    request.cookies = {}
    body = GymnasiumAgentRunRequest.model_validate({**row, "_ng_task_index": index, "_ng_rollout_index": 0})
    return asyncio.run(agent.run(request, body))


def items_of(payload: dict, kind: str) -> list[dict]:
    return [i for i in payload["input"] if i.get("type") == kind or (kind == "user" and i.get("role") == "user")]


def test_gymnasium_agent_multi_turn_rollout_with_tools(tmp_path):
    server = make_server()
    row = rows_of(SOKOBAN, 1, tmp_path)[0]
    forged = {**row, "reward": 5.0, "expected_answer": "R", "ground_truth": "R"}
    policy = Policy(
        [
            [call_item("play", "{not json", "c1")],  # answered with its error, not a step
            [message_item("no idea")],  # a wasted turn: the env shows the board again
            [call_item("play", json.dumps({"moves": oracle(SOKOBAN, 0)}), "c3")],
        ]
    )
    result = run(make_agent(server.setup_webserver(), policy), forged, 0)
    second, third = policy.requests[1], policy.requests[2]
    error = [i for i in items_of(second, "function_call_output") if i["call_id"] == "c1"]
    assert error and error[0]["output"].startswith("error:")
    assert any("could not read" in str(i.get("content")) for i in items_of(third, "user"))
    assert [t["name"] for t in third["tools"]] == ["play"]
    verdict = result.info["verdict"]
    assert result.terminated and not result.truncated and verdict["passed"]
    # The env's verdict, not the forged 5.0 (a wasted turn costs no reward: validity is a constraint in puzzles).
    assert result.reward == verdict["reward"] <= 1.0
    assert len(server.sessions) == 0  # closed by NeMo Gym on termination


def test_gymnasium_agent_single_turn_and_abandoned_sessions(tmp_path):
    server = make_server(max_sessions=1)
    app = server.setup_webserver()
    sokoban = rows_of(SOKOBAN, 1, tmp_path)[0]
    stopped = run(make_agent(app, Policy([[message_item("no idea")]]), max_steps=1), sokoban, 0)
    assert stopped.truncated and not stopped.terminated and stopped.reward == 0.0
    assert len(server.sessions) == 1  # NeMo Gym never closes a session its agent abandons at max_steps
    math = rows_of(MATH, 2, tmp_path)
    right = run(make_agent(app, Policy([[message_item(oracle(MATH, 1))]])), math[1], 1)
    wrong = run(make_agent(app, Policy([[message_item("\\boxed{-1}")]])), math[0], 0)
    assert (right.reward, wrong.reward) == (1.0, 0.0) and right.terminated and wrong.terminated
    assert len(server.sessions) == 0  # the abandoned one was closed when the next rollout went past max_sessions


# ---- the template's YAML and data, by NeMo Gym's own validators ----------------------------------------------------
def test_config_validates_as_nemo_gym_servers():
    kinds = {}
    for name in CONFIG:
        config, error = maybe_get_server_instance_config(name, CONFIG[name])
        assert error is None, f"{name}: {error}"
        kinds[name] = config.SERVER_TYPE
    assert kinds == {"rlvr_gym": "resources_servers", "rlvr_gym_agent": "responses_api_agents"}
    agent = CONFIG["rlvr_gym_agent"]["responses_api_agents"]["gymnasium_agent"]
    assert agent["max_steps"] >= rlvr_gym.make(SOKOBAN).max_turns
    assert (TEMPLATE_DIR / "data" / "example.jsonl").read_text().count("\n") == 5  # NeMo Gym wants exactly 5
    with pytest.raises(ValueError, match="one worker"):
        make_server(num_workers=4)  # sessions live in one process


@pytest.mark.parametrize("env_id", [MATH, SOKOBAN, "rlvr/ToolDepth-v0", "example"])
def test_rows_pass_nemo_gym_data_validation(env_id, tmp_path):
    if env_id == "example":
        lines = (TEMPLATE_DIR / "data" / "example.jsonl").read_text().splitlines()
    else:
        lines = write_jsonl(env_id, 3, tmp_path / "rows.jsonl").read_text().splitlines()
    for line in lines:
        metrics, offending = compute_sample_metrics(line)
        assert not offending, line[:300]
        assert metrics.number_of_examples == 1
    row = json.loads(lines[0])
    for tool in row["responses_create_params"]["tools"]:
        tool.pop("strict")
    assert compute_sample_metrics(json.dumps(row))[1]  # the validator does reject a bad row


def test_nemo_gym_cli_validates_the_example_data(tmp_path):
    """NeMo Gym's own `gym dataset collate` (example_validation) on a copy of the template laid out as in a NeMo Gym
    checkout: it recomputes the example rows' metrics and fails if the shipped example_metrics.json differs."""
    server_dir = tmp_path / "resources_servers" / "rlvr_gym"
    shutil.copytree(TEMPLATE_DIR, server_dir, ignore=shutil.ignore_patterns("__pycache__"))
    command = [
        str(Path(sys.executable).parent / "gym"), "dataset", "collate",
        "+config_paths=[resources_servers/rlvr_gym/configs/rlvr_gym.yaml]",
        "+output_dirpath=data/rlvr_gym", "+mode=example_validation",
    ]  # fmt: skip
    proc = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    assert not list(server_dir.glob("data/*conflict*"))
    assert json.loads((server_dir / "data" / "example_metrics.json").read_text())["Number of examples"] == 5
