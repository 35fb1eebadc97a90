"""Any registered env as an MCP server: tools `reset`, `step`, `state`, one env session per MCP session.

The tools and their replies are `rlvr_gym.serve.mcp_rpc`'s (the same ones `rlvr-gym serve` offers OpenEnv's MCP
clients), built on `rlvr_gym.serve.sessions`, so the rule "verifier secrets never leave the server" lives in one
place: no ground truth, no reference actions.
"""

from __future__ import annotations

import json
import weakref
from typing import Any

from mcp import types
from mcp.server.fastmcp import FastMCP

from ..http_guard import client_of
from ..serve.mcp_rpc import ENV_TOOLS, call_tool
from ..serve.sessions import Session, SessionError, SessionLimits, SessionPool
from .http import fastmcp


def build_env_server(
    env_id: str,
    env_kwargs: dict[str, Any] | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    limits: SessionLimits | None = None,
) -> FastMCP:
    """Env sessions are capped like the env server's (total, per client, eviction, reset rate)."""
    pool = SessionPool(env_id, env_kwargs, limits)
    by_client: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
    server = fastmcp(f"rlvr-gym {env_id}", f"Play {env_id}: call reset, then step with your answer text until done.",
                     host=host, port=port)
    low = server._mcp_server  # the low-level server: the tools carry the ready-made schemas of mcp_rpc
    listing = [types.Tool(name=t["name"], description=t["description"], inputSchema=t["inputSchema"])
               for t in ENV_TOOLS]

    async def session_for(client_session: Any, request: Any) -> Session:
        sid = by_client.get(client_session)
        if sid is not None:
            try:
                return await pool.resume(sid)  # rebuilt from its ticket if it was evicted
            except SessionError as exc:
                if exc.status != 404:
                    raise
        session = pool.open(client_of(request.scope) if request is not None else "stdio")
        by_client[client_session] = session.id
        weakref.finalize(client_session, pool.close, session.id)
        return session

    @low.list_tools()
    async def list_tools() -> list[types.Tool]:
        return listing

    @low.call_tool(validate_input=False)  # call_tool checks the arguments, with the server's own error codes
    async def call(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        context = low.request_context
        try:
            value = await call_tool(pool, await session_for(context.session, context.request), name, arguments)
        except SessionError as exc:  # capacity and rate limits too: a tool error, never a crash
            return types.CallToolResult(content=[types.TextContent(type="text", text=f"{exc.code}: {exc}")],
                                        isError=True)
        return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(value))],
                                    structuredContent=value, isError=False)

    return server
