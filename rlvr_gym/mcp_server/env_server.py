"""Any registered env as an MCP server: tools `reset`, `step`, `state`, one env session per MCP session.

The replies are built by `rlvr_gym.serve.sessions` (the same code the OpenEnv server uses), so the rule "verifier
secrets never leave the server" lives in one place: no ground truth, no reference actions.
"""

from __future__ import annotations

import weakref
from typing import Any

from mcp.server.fastmcp import Context, FastMCP

from ..serve.sessions import Session, SessionError, SessionPool


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
    max_sessions: int = 64,
) -> FastMCP:
    pool = SessionPool(env_id, env_kwargs, max_sessions=max_sessions)
    by_client: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
    server = FastMCP(
        f"rlvr-gym {env_id}",
        host=host,
        port=port,
        instructions=f"Play {env_id}: call reset, then step with your answer text until done.",
    )

    def session_for(ctx: Context) -> Session:
        sid = by_client.get(ctx.session)
        if sid is not None and sid in pool.sessions:
            return pool.get(sid)
        session = pool.open()
        by_client[ctx.session] = session.id
        weakref.finalize(ctx.session, pool.close, session.id)
        return session

    async def guarded(coro: Any) -> dict[str, Any]:
        try:
            return _public(await coro)
        except SessionError as exc:
            raise ValueError(f"{exc.code}: {exc}") from exc

    @server.tool()
    async def reset(ctx: Context, task_index: int | None = None, seed: int | None = None) -> dict[str, Any]:
        """Start a new episode (a task by index, or drawn by seed); returns the first observation."""
        return await guarded(pool.reset(session_for(ctx), {"task_index": task_index, "seed": seed}))

    @server.tool()
    async def step(ctx: Context, text: str) -> dict[str, Any]:
        """Send one action (the model's output text); returns observation, reward and done."""
        return await guarded(pool.step(session_for(ctx), text))

    @server.tool()
    def state(ctx: Context) -> dict[str, Any]:
        """The episode's public state: step count, done, task id."""
        return pool.state(session_for(ctx))

    return server
