"""`rlvr-gym mcp --transport http` attacked: no or bad token, DNS-rebinding Host, cross-origin posts, non-JSON,
oversized and deep bodies, a flood of new sessions, one client holding every env session; `--allow-remote` always
comes with a token."""

from __future__ import annotations

import argparse
import asyncio
import json
import time

import pytest

pytest.importorskip("mcp")
import httpx  # noqa: E402
from attack_kit import flood, served  # noqa: E402
from mcp import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from rlvr_gym.http_guard import add_server_arguments, launch_policy  # noqa: E402
from rlvr_gym.mcp_server import build_server  # noqa: E402
from rlvr_gym.mcp_server.env_server import build_env_server  # noqa: E402
from rlvr_gym.mcp_server.http import NEW_SESSION_BURST, NEW_SESSIONS_PER_S, http_app, mcp_policy  # noqa: E402
from rlvr_gym.serve.sessions import SessionLimits  # noqa: E402

TOKEN = "mcp-attack-token"
INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "flood", "version": "0"}}}).encode()
MCP_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def tools():
    with served(http_app(build_server("tools"), mcp_policy(TOKEN))) as (port, _):
        yield f"http://127.0.0.1:{port}/mcp"


def post(url: str, body: bytes = INIT, client: httpx.Client | None = None, **headers: str) -> httpx.Response:
    return (client or httpx).post(url, content=body, headers={**MCP_HEADERS, **headers}, timeout=10)


def test_token_host_origin_and_media_type_are_checked(tools):
    auth = {"authorization": f"Bearer {TOKEN}"}
    assert post(tools).status_code == 401
    assert post(tools, authorization="Bearer wrong").status_code == 401
    assert post(tools + "?token=%C3%A4%FF").status_code == 401  # any encoding: a 401, never a 500
    assert post(tools, host="rebind.test", **auth).status_code == 403
    assert post(tools, origin="http://127.0.0.1:1", **auth).status_code == 403
    assert post(tools, INIT, **{**auth, "content-type": "text/plain"}).status_code == 415
    assert post(tools, b"[" * 50_000 + b"]" * 50_000, **auth).json()["error"]["code"] == "JSON_TOO_DEEP"
    assert post(tools, b" " * (5 << 20), **auth).status_code == 413
    assert post(tools + f"?token={TOKEN}").status_code == 200  # the printed URL works as is


def test_a_flood_of_new_sessions_is_rate_limited():
    with served(http_app(build_server("tools"), mcp_policy(TOKEN))) as (port, _), httpx.Client() as client:
        url = f"http://127.0.0.1:{port}/mcp?token={TOKEN}"  # each initialize opens a session kept until it idles out
        flood(lambda: post(url, client=client).status_code, 200, 429, NEW_SESSION_BURST, NEW_SESSIONS_PER_S)
        known = post(url, INIT, client, **{"mcp-session-id": "an-old-one"})
        assert known.status_code != 429  # requests of existing sessions are not counted


def test_one_client_cannot_hold_every_env_session_for_long():
    limits = SessionLimits(max_sessions=2, per_client=2, reclaim_idle_s=0.5)
    app = http_app(build_env_server("rlvr/MathArithmetic-v0", {"max_attempts": 2}, limits=limits), mcp_policy(TOKEN))

    async def reset(url: str) -> bool:  # a session left in mid-episode: a reset alone is evicted and rebuilt at will
        async with streamable_http_client(url) as (read, write, _), ClientSession(read, write) as session:
            await session.initialize()
            reply = await session.call_tool("reset", {"task_index": 0})
            if not reply.isError:
                await session.call_tool("step", {"text": "\\boxed{-1}"})
            return not reply.isError

    async def scenario(url: str) -> list[bool]:
        first = [await reset(url) for _ in range(3)]  # sessions that are never closed (no DELETE)
        await asyncio.sleep(0.6)
        return [*first, await reset(url)]

    with served(app) as (port, _):
        assert asyncio.run(scenario(f"http://127.0.0.1:{port}/mcp?token={TOKEN}")) == [True, True, False, True]


def test_allow_remote_always_has_a_token(monkeypatch):
    monkeypatch.delenv("RLVR_GYM_TOKEN", raising=False)
    parser = argparse.ArgumentParser()
    add_server_arguments(parser, port=1)
    assert launch_policy(parser.parse_args(["--host", "0.0.0.0"]), "mcp", mcp_policy()) is None
    policy = launch_policy(parser.parse_args(["--host", "0.0.0.0", "--allow-remote"]), "mcp", mcp_policy())
    assert policy is not None and policy.token and len(policy.token) >= 24 and policy.json_paths == ("/mcp",)
    loopback = launch_policy(parser.parse_args([]), "mcp", mcp_policy())
    assert loopback.token and loopback.token != policy.token and "rebind.test" not in loopback.hosts
    assert launch_policy(parser.parse_args(["--allowed-host", "*"]), "mcp") is None  # only with --allow-remote
    t0 = time.monotonic()
    assert launch_policy(parser.parse_args(["--token", "given"]), "mcp").token == "given"
    assert time.monotonic() - t0 < 1
