"""The tools family's typed tools as MCP tools, executed on the family's real toolset and world.

Each MCP session gets its own fresh world (the same state a ToolDepth episode starts from), so writes made by one
client never show up in another's.
"""

from __future__ import annotations

import weakref
from typing import Any

from mcp import types
from mcp.server.fastmcp import FastMCP

from .http import fastmcp


def env_toolset(env_id: str, env_kwargs: dict[str, Any] | None = None) -> Any:
    """The typed toolset an env executes its tool calls on (an env declares it as `toolset`, or its task source
    does), found through the registry so this server knows no family."""
    from rlvr_gym.registry import make

    env = make(env_id, **(env_kwargs or {}))
    try:
        toolset = getattr(env, "toolset", None) or getattr(getattr(env, "source", None), "toolset", None)
    finally:
        env.close()
    if toolset is None:
        raise ValueError(f"{env_id} declares no toolset to serve")
    return toolset


def build_toolset_server(toolset: Any, *, host: str = "127.0.0.1", port: int = 8000) -> FastMCP:
    server = fastmcp(
        "rlvr-gym tools",
        "Typed tools over a simulated world (countries, cities, units, dates, files).",
        host=host,
        port=port,
    )
    low = server._mcp_server  # FastMCP's own low-level server: the tools here carry ready-made JSON schemas
    worlds: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
    listing = [
        types.Tool(name=t.name, description=t.description, inputSchema=t.parameters)
        for t in (toolset[n] for n in toolset.names())
    ]

    @low.list_tools()
    async def list_tools() -> list[types.Tool]:
        return listing

    @low.call_tool(validate_input=False)  # the tool's strict pydantic model validates, with TIER's error counts
    async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        client = low.request_context.session
        world = worlds.get(client)
        if world is None:
            world = worlds[client] = toolset.new_world()
        outcome = toolset.execute(world, name, arguments)
        body = outcome.model_dump(mode="json")  # the validated arguments too: the verifier compares them
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=outcome.as_content())],
            structuredContent=body,
            isError=not outcome.ok,
        )

    return server
