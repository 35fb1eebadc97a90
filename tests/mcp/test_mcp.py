"""MCP server and client: the official SDK's client over stdio and streamable HTTP, env sessions, MCP toolsets."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import threading
import time

import pytest

pytest.importorskip("mcp")
import uvicorn  # noqa: E402
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

import rlvr_gym  # noqa: E402
from rlvr_gym.envs.tools.mcp_source import McpToolDepthEnv, McpToolset  # noqa: E402
from rlvr_gym.mcp_server import build_server  # noqa: E402
from rlvr_gym.mcp_server.http import http_app, mcp_policy  # noqa: E402

MATH = "rlvr/MathArithmetic-v0"
SERVER = [sys.executable, "-m", "rlvr_gym.mcp_server"]
TOKEN = "mcp-test-token"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_http(target: str):
    """The HTTP server as the CLI runs it (guarded, with a token); yields the URL the CLI prints."""
    port = free_port()
    app = http_app(build_server(target), mcp_policy(TOKEN))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/mcp?token={TOKEN}"
    server.should_exit = True
    thread.join(5)


@pytest.fixture(scope="module")
def tools_url():
    yield from serve_http("tools")


async def stdio_call(args: list[str], calls: list[tuple[str, dict]]) -> tuple[list[str], list]:
    params = StdioServerParameters(command=SERVER[0], args=SERVER[1:] + args)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        names = [t.name for t in (await session.list_tools()).tools]
        return names, [await session.call_tool(n, a) for n, a in calls]


def test_toolset_over_stdio_lists_and_calls_typed_tools():
    names, (good, bad) = asyncio.run(
        stdio_call(["tools"], [("get_capital", {"country": "France"}), ("get_capital", {"country": 3})])
    )
    assert "get_capital" in names and "convert_units" in names
    assert not good.isError and good.structuredContent["result"] == "Paris"
    assert bad.isError and bad.structuredContent["error_kind"] == "schema" and bad.structuredContent["type_errors"]


def test_toolset_over_streamable_http(tools_url):
    async def go():
        async with streamable_http_client(tools_url) as (read, write, _), ClientSession(read, write) as session:
            await session.initialize()
            listed = {t.name: t for t in (await session.list_tools()).tools}
            assert listed["get_capital"].inputSchema["required"] == ["country"]
            return await session.call_tool("get_capital", {"country": "Japan"})

    assert asyncio.run(go()).structuredContent["result"] == "Tokyo"


def test_env_as_mcp_plays_an_episode_and_keeps_secrets():
    env = rlvr_gym.make(MATH)
    env.reset(options={"task_index": 5})
    oracle, truth = env.task.reference_actions[0], str(env.task.ground_truth)
    wrong = env.wrong_answers(env.task, __import__("random").Random(0))[0][0]
    _, (opened, solved, state, again, failed) = asyncio.run(
        stdio_call(
            [MATH],
            [
                ("reset", {"task_index": 5}),
                ("step", {"text": oracle}),
                ("state", {}),
                ("reset", {"task_index": 5}),
                ("step", {"text": wrong}),
            ],
        )
    )
    opening = json.dumps(opened.structuredContent)
    assert truth in oracle and oracle not in opening and "ground_truth" not in opening
    assert "reference_actions" not in opening
    assert solved.structuredContent["done"] and solved.structuredContent["reward"] == 1.0
    assert solved.structuredContent["verdict"]["passed"] is True
    assert state.structuredContent["step_count"] == 1
    assert not again.isError
    assert failed.structuredContent["verdict"]["passed"] is False and failed.structuredContent["reward"] < 1.0
    for reply in (opened, solved, state, again, failed):
        text = json.dumps(reply.structuredContent) + "".join(c.text for c in reply.content)
        assert "ground_truth" not in text and "reference_actions" not in text


def test_mcp_toolset_reports_an_unreachable_server():
    with pytest.raises(ConnectionError):
        McpToolset(url=f"http://127.0.0.1:{free_port()}/mcp", timeout_s=5)


def test_mcp_toolset_calls_our_server(tools_url):
    toolset = McpToolset(url=tools_url)
    try:
        world = toolset.new_world()
        assert (
            "get_capital" in toolset and toolset.execute(world, "get_capital", {"country": "France"}).result == "Paris"
        )
        missing = toolset.execute(world, "no_such_tool", {})
        assert missing.error_kind == "unknown_tool"
        assert toolset.execute(world, "get_capital", {}).param_errors == 1
    finally:
        toolset.close()


def test_tooldepth_solved_through_mcp_toolset(tools_url):
    env = McpToolDepthEnv(mcp_url=tools_url, depths=[1, 2])
    try:
        env.reset(options={"task_index": 0})
        result = None
        for action in env.task.reference_actions:
            result = env.step_result(action)
        assert result is not None and result.verdict is not None and result.verdict.passed
        env.reset(options={"task_index": 0})
        result = env.step_result("Answer: 123456789")
        assert result.verdict is not None and not result.verdict.passed
    finally:
        env.close()


def test_cli_refuses_unknown_env_and_public_bind():
    from rlvr_gym.mcp_server import main

    assert main(["rlvr/Nope-v0"]) == 2
    assert main([MATH, "--transport", "http", "--host", "0.0.0.0"]) == 2


def test_env_as_mcp_over_streamable_http():
    async def go(url: str):
        async with streamable_http_client(url) as (read, write, _), ClientSession(read, write) as session:
            await session.initialize()
            await session.call_tool("reset", {"task_index": 2})
            return await session.call_tool("step", {"text": "not a number"})

    for url in serve_http(MATH):
        reply = asyncio.run(go(url)).structuredContent
        assert reply["done"] and reply["verdict"]["passed"] is False
