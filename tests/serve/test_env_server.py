"""`rlvr-gym serve`: OpenEnv wire protocol, sessions, typed errors, secrets kept server-side, remote runner.

The servers here run with a token, as the CLI's always do; attacks on the guard are in tests/security/.
"""

from __future__ import annotations

import json

import pytest
import websockets.sync.client as websockets_sync
from serve_kit import AUTH, ENV, TOKEN, local_client

import rlvr_gym
from rlvr_gym.rollout import collect_sync
from rlvr_gym.serve.app import create_app, server_policy
from rlvr_gym.serve.client import RemoteEnv
from rlvr_gym.serve.sessions import SessionLimits


def test_http_routes_and_typed_errors():
    client = local_client(create_app(ENV, {"max_attempts": 2}, limits=SessionLimits(max_sessions=1),
                                     policy=server_policy(TOKEN)))
    assert client.get("/health", headers={"Authorization": ""}).json() == {"status": "healthy"}
    assert set(client.get("/schema").json()) == {"action", "observation", "state", "reset_observation"}
    first = client.post("/reset", json={"task_index": 3}).json()
    sid = first["metadata"]["session_id"]
    assert first["done"] is False and first["metadata"]["task"]["id"] == "math/train/3"
    assert client.post("/step", json={"session_id": sid, "action": {"bad": 1}}).json()["error"]["code"] == \
        "VALIDATION_ERROR"
    assert client.post("/step", json={"session_id": "nope", "action": {"text": "1"}}).status_code == 404
    assert client.post("/step", content=b"{not json", headers={"content-type": "application/json"}).json()[
        "error"]["code"] == "INVALID_JSON"
    wrong = client.post("/step", json={"session_id": sid, "action": {"text": "\\boxed{-5}"}}).json()
    assert wrong["done"] is False  # two attempts: the episode goes on, so the session holds real state now
    assert client.post("/reset", json={}).status_code == 503  # one session allowed, and it is mid-episode
    done = client.post("/step", json={"session_id": sid, "action": {"text": "\\boxed{0}"}}).json()
    assert done["done"] is True and done["metadata"]["verdict"]["passed"] in (True, False)
    assert client.get("/state", params={"session_id": sid}).json()["step_count"] == 2


def test_a_step_after_the_end_says_so_instead_of_a_reward_that_contradicts_the_verdict(server):
    base, _ = server
    env = rlvr_gym.make(ENV)
    env.reset(options={"task_index": 1})
    with websockets_sync.connect(base.replace("http", "ws") + "/ws", additional_headers=AUTH) as ws:
        ws.send(json.dumps({"type": "reset", "data": {"task_index": 1}}))
        ws.recv()
        ws.send(json.dumps({"type": "step", "data": {"text": env.task.reference_actions[0]}}))
        final = json.loads(ws.recv())["data"]
        assert final["done"] and final["reward"] == final["metadata"]["verdict"]["reward"] == 1.0
        ws.send(json.dumps({"type": "step", "data": {"text": "again"}}))
        after = json.loads(ws.recv())
        assert after["type"] == "error" and after["data"]["code"] == "SESSION_ERROR"
        assert "episode is over (reward 1, passed True)" in after["data"]["message"]


def test_secrets_never_leave_the_server():
    client = local_client(create_app(ENV))
    env = rlvr_gym.make("rlvr/MathArithmetic-v0")
    env.reset(options={"task_index": 5})
    secret = env.task.reference_actions[0]
    reply = client.post("/reset", json={"task_index": 5})
    assert secret not in reply.text and "ground_truth" not in reply.text and "reference_actions" not in reply.text


def test_websocket_protocol_frames(server):
    base, _ = server
    with websockets_sync.connect(base.replace("http", "ws") + "/ws", additional_headers=AUTH) as ws:
        ws.send("{bad json")
        assert json.loads(ws.recv())["data"]["code"] == "INVALID_JSON"
        ws.send(json.dumps({"type": "dance"}))
        assert json.loads(ws.recv())["data"]["code"] == "UNKNOWN_TYPE"
        ws.send(json.dumps({"type": "reset", "data": {"task_index": 1}}))
        obs = json.loads(ws.recv())
        assert obs["type"] == "observation" and obs["data"]["done"] is False
        ws.send(json.dumps({"type": "step", "data": {"text": "\\boxed{-1}"}}))
        assert json.loads(ws.recv())["data"]["done"] is True
        ws.send(json.dumps({"type": "state"}))
        assert json.loads(ws.recv())["data"]["step_count"] == 1


def test_openenv_client_drives_the_env(server):
    openenv = pytest.importorskip("openenv")
    base, _ = server
    with openenv.GenericEnvClient(base_url=base, headers=AUTH).sync() as client:
        first = client.reset(task_index=2)
        assert first.done is False
        result = client.step({"text": "\\boxed{12345}"})
        assert result.done is True and result.reward == 0.0
        assert client.state() is not None


def test_runner_evaluates_a_remote_env_like_a_local_one(server, monkeypatch):
    base, _ = server
    monkeypatch.setenv("RLVR_GYM_TOKEN", TOKEN)  # how a user passes it (env args are recorded in the manifest)

    class Answer(rlvr_gym.Agent):
        async def act(self, ctx, observation):
            return rlvr_gym.AgentStep(text="\\boxed{7}")

    remote = collect_sync("rlvr/Remote-v0", Answer(), tasks=4, env_kwargs={"base_url": base}, concurrency=2)
    local = collect_sync("rlvr/MathArithmetic-v0", Answer(), tasks=4)
    assert [e.task_id for e in remote] == [e.task_id for e in local]
    assert [e.reward for e in remote] == [e.reward for e in local]
    assert all(e.error is None for e in remote)


def test_remote_env_without_address_is_unavailable():
    with pytest.raises(rlvr_gym.EnvUnavailable):
        RemoteEnv()


def test_remote_env_takes_the_token_from_the_printed_url_and_names_a_missing_one(server, monkeypatch):
    base, _ = server
    monkeypatch.delenv("RLVR_GYM_TOKEN", raising=False)
    with pytest.raises(rlvr_gym.EnvUnavailable, match="HTTP 401.*RLVR_GYM_TOKEN"):
        RemoteEnv(base_url=base)
    env = RemoteEnv(base_url=f"{base}/?token={TOKEN}")
    try:
        env.reset(options={"task_index": 0})
        assert env.task.id == "math/train/0"
    finally:
        env.close()
