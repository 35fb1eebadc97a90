"""`rlvr-gym serve` as OpenEnv's own tools and clients use a server (#41): `openenv validate --url`, the clients
with the token in the URL, stateless HTTP calls that never close anything, `episode_id`, and MCP as OpenEnv's
JSON-RPC on `POST /mcp`, `WS /mcp` and `{"type": "mcp"}` frames."""

from __future__ import annotations

import asyncio
import base64

import pytest
from serve_kit import AUTH, ENV, TOKEN, local_client

import rlvr_gym
from rlvr_gym.serve.app import create_app, server_policy
from rlvr_gym.serve.sessions import SessionLimits

openenv = pytest.importorskip("openenv")


def with_token(base: str, token: str = TOKEN) -> str:
    """The URL form for clients that take only a URL: the token as the Basic-auth password."""
    return base.replace("http://", f"http://rlvr:{token}@")


def answer(index: int) -> str:
    return rlvr_gym.make(ENV).get_task(index).reference_actions[0]


def test_openenv_validate_passes_with_the_token_in_the_url(server):
    from openenv.cli._validation import validate_running_environment  # what `openenv validate --url` runs

    base, _ = server
    report = validate_running_environment(with_token(base))
    assert report["passed"], [c for c in report["criteria"] if not c["passed"]]
    assert {c["id"] for c in report["criteria"]} >= {"openapi_version_available", "health_endpoint",
                                                     "metadata_endpoint", "schema_endpoint", "mcp_endpoint",
                                                     "mode_endpoint_consistency"}
    assert report["standard_profile"] == "openenv-http/1.x" and report["mode"] == "simulation"
    assert not validate_running_environment(with_token(base, "wrong"))["passed"]


def test_openenv_clients_with_the_token_in_the_url(server):
    from openenv.core.mcp_client import MCPToolClient

    base, app = server
    with openenv.GenericEnvClient(base_url=with_token(base)).sync() as client:
        first = client.reset(task_index=2, episode_id="run-1/ep-2")
        assert first.observation["metadata"]["episode_id"] == "run-1/ep-2"
        assert client.step({"text": answer(2)}).reward == 1.0
        assert client.state()["episode_id"] == "run-1/ep-2"

    async def production_mode() -> tuple[list[str], dict]:
        async with MCPToolClient(base_url=with_token(base)) as env:  # HTTP /mcp session + WS attached to it
            names = [t.name for t in await env.list_tools()]
            await env.call_tool("reset", task_index=4)
            return names, await env.call_tool("step", text=answer(4))

    names, stepped = asyncio.run(production_mode())
    assert names == ["reset", "step", "state"] and stepped["done"] and stepped["verdict"]["passed"]
    assert not app.state.pool.sessions  # both clients closed what they opened


def test_stateless_http_as_openenv_sends_it_exhausts_nothing():
    app = create_app(ENV, limits=SessionLimits(max_sessions=2, per_client=2), policy=server_policy(TOKEN))
    client, pool = local_client(app), app.state.pool
    opened = [client.post("/reset", json={}).json() for _ in range(10)]  # never closed, never continued
    assert len(pool.sessions) <= 2 and all(o["done"] is False for o in opened)
    seed = opened[0]["metadata"]["seed"]  # a reset without a task names the seed it drew
    again = client.post("/step", json={"session_id": opened[0]["metadata"]["session_id"],
                                       "action": {"text": "\\boxed{0}"}}).json()
    assert again["metadata"]["task"] == opened[0]["metadata"]["task"]  # evicted, rebuilt on the same task
    task = rlvr_gym.make(ENV).reset(seed=seed)[1]["task_index"]
    once = client.post("/step", json={"action": {"text": answer(task)}, "seed": seed}).json()  # no session at all
    assert once["done"] and once["metadata"]["verdict"]["passed"] and once["metadata"]["session_id"] is None
    assert once["metadata"]["task"]["id"] == opened[0]["metadata"]["task"]["id"]
    assert client.get("/state").json() == {"session_id": None, "episode_id": None, "env_id": ENV, "step_count": 0,
                                           "done": False, "task_id": None}
    named = client.post("/reset", json={"episode_id": "ep-9", "task_index": 1}).json()["metadata"]
    assert named["episode_id"] == "ep-9"
    assert client.get("/state", params={"session_id": named["session_id"]}).json()["episode_id"] == "ep-9"
    assert len(pool.sessions) <= 2


def test_mcp_as_openenv_json_rpc_on_http_and_websockets():
    client = local_client(create_app(ENV, policy=server_policy(TOKEN)))

    def rpc(method: str, **params) -> dict:
        return client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).json()

    assert client.post("/mcp", json={}).json()["error"]["code"] == -32600  # what `openenv validate` sends
    assert rpc("no/such")["error"]["code"] == -32601
    assert [t["name"] for t in rpc("tools/list")["result"]["tools"]] == ["reset", "step", "state"]
    sid = rpc("openenv/session/create")["result"]["session_id"]
    opened = rpc("tools/call", name="reset", arguments={"task_index": 3}, session_id=sid)["result"]
    assert opened["data"]["task"]["id"] == "math/train/3" and opened["structuredContent"] == opened["data"]
    with client.websocket_connect(f"ws://127.0.0.1/ws?session_id={sid}") as ws:
        ws.send_json({"type": "mcp", "data": {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                                              "params": {"name": "step", "arguments": {"text": answer(3)}}}})
        reply = ws.receive_json()
        assert reply["type"] == "mcp" and reply["data"]["id"] == 7 and reply["data"]["result"]["data"]["reward"] == 1
    over = rpc("tools/call", name="step", arguments={"text": "1"}, session_id=sid)["error"]
    assert over["data"]["code"] == "SESSION_ERROR" and "episode is over" in over["message"]
    assert rpc("openenv/session/close", session_id=sid)["result"]["closed"] is True
    with client.websocket_connect("ws://127.0.0.1/mcp") as ws:  # JSON-RPC per frame, one session per socket
        ws.send_text("{not json")
        assert ws.receive_json()["error"]["code"] == -32700
        ws.send_json({"jsonrpc": "2.0", "id": "a", "method": "tools/call",
                      "params": {"name": "reset", "arguments": {"task_index": 0}}})
        assert ws.receive_json()["result"]["data"]["task"]["id"] == "math/train/0"


def test_basic_credentials_count_only_outside_cross_site_requests():
    client = local_client(create_app(ENV, policy=server_policy(TOKEN)))

    def basic(user: str, password: str, **headers: str) -> int:
        value = base64.b64encode(f"{user}:{password}".encode()).decode()
        return client.get("/metadata", headers={**headers, "Authorization": f"Basic {value}"}).status_code

    assert basic("rlvr", TOKEN) == 200 and basic(TOKEN, "") == 200  # as requests and websockets send a URL's
    assert basic("rlvr", "wrong") == 401 and basic("rlvr", TOKEN + "x") == 401
    assert basic("rlvr", TOKEN, **{"Sec-Fetch-Site": "cross-site"}) == 401  # a browser's cached credentials
    assert client.get("/metadata", headers={"Authorization": "Basic %%%"}).status_code == 401
    assert client.get("/metadata", headers=AUTH).status_code == 200
