"""Any registered env as an MCP server: tools `reset`, `step`, `state`, one env session per MCP session.

The replies are built by `rlvr_gym.serve.sessions` (the same code the OpenEnv server uses), so the rule "verifier
secrets never leave the server" lives in one place: no ground truth, no reference actions.
"""

from __future__ import annotations

import weakref
from typing import Any

from mcp.server.fastmcp import Context, FastMCP

from ..http_guard import client_of
from ..serve.sessions import Session, SessionError, SessionLimits, SessionPool
from .http import fastmcp


def _public(payload: dict[str, Any]) -> dict[str, Any]:
    """The MCP reply: observation text, reward, done and the public metadata (task view, verdict)."""
    meta = payload["metadata"]
    return {
        "observation": payload["observation"]["text"],
        "reward": payload["reward"],
        "done": payload["done"],
        "valid_action": meta.get("valid_action", True),
        "task": meta.get("task"),
        "verdict": meta.get("verdict"),
    }


def build_env_server(
    env_id: str,
    env_kwargs: dict[str, Any] | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    limits: SessionLimits | None = None,
) -> FastMCP:
    """Env sessions are capped like the env server's (total, per client, idle reclaim, reset rate)."""
    pool = SessionPool(env_id, env_kwargs, limits)
    by_client: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
    server = fastmcp(f"rlvr-gym {env_id}", f"Play {env_id}: call reset, then step with your answer text until done.",
                     host=host, port=port)

    def session_for(ctx: Context) -> Session:
        sid = by_client.get(ctx.session)
        if sid is not None and sid in pool.sessions:
            return pool.get(sid)
        request = ctx.request_context.request
        session = pool.open(client_of(request.scope) if request is not None else "stdio")
        by_client[ctx.session] = session.id
        weakref.finalize(ctx.session, pool.close, session.id)
        return session

    async def guarded(ctx: Context, call: Any, *args: Any) -> dict[str, Any]:
        try:
            return _public(await call(session_for(ctx), *args))
        except SessionError as exc:  # capacity and rate limits too: a tool error, never a crash
            raise ValueError(f"{exc.code}: {exc}") from exc

    @server.tool()
    async def reset(ctx: Context, task_index: int | None = None, seed: int | None = None) -> dict[str, Any]:
        """Start a new episode (a task by index, or drawn by seed); returns the first observation."""
        return await guarded(ctx, pool.reset, {"task_index": task_index, "seed": seed})

    @server.tool()
    async def step(ctx: Context, text: str) -> dict[str, Any]:
        """Send one action (the model's output text); returns observation, reward and done."""
        return await guarded(ctx, pool.step, text)

    @server.tool()
    def state(ctx: Context) -> dict[str, Any]:
        """The episode's public state: step count, done, task id."""
        try:
            return pool.state(session_for(ctx))
        except SessionError as exc:
            raise ValueError(f"{exc.code}: {exc}") from exc

    return server
