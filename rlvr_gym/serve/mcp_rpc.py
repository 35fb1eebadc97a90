"""The env's MCP tools (`reset`, `step`, `state`), and OpenEnv's JSON-RPC flavour of MCP that serves them.

One definition of the tools for both MCP servers: `rlvr-gym mcp ENV` (the official SDK, `mcp_server/env_server.py`)
and `rlvr-gym serve`'s OpenEnv endpoints — `POST /mcp` (one JSON-RPC request per POST, as OpenEnv's production-mode
clients and `openenv validate` send it), `WS /mcp` (JSON-RPC per frame, one session per socket) and
`{"type": "mcp", "data": <request>}` frames on `WS /ws` (that socket's session). OpenEnv's methods: `tools/list`,
`tools/call` (with `params.session_id`, else on a temporary session, like OpenEnv's temporary env),
`openenv/session/create` and `openenv/session/close`. Replies follow JSON-RPC 2.0; a refused call (capacity, rate,
an episode that is over) is a JSON-RPC error whose `data.code` is the server's error code.
"""

from __future__ import annotations

import json
from typing import Any

from .sessions import Session, SessionError, SessionPool

ENV_TOOLS: list[dict[str, Any]] = [
    {"name": "reset", "description": "Start a new episode (a task by index, or drawn by seed); returns the first "
     "observation.", "inputSchema": {"type": "object", "properties": {
         "task_index": {"type": "integer", "minimum": 0}, "seed": {"type": "integer", "minimum": 0},
         "episode_id": {"type": "string"}}}},
    {"name": "step", "description": "Send one action (the model's output text); returns observation, reward and "
     "done.", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}},
    {"name": "state", "description": "The episode's public state: step count, done, task id.",
     "inputSchema": {"type": "object", "properties": {}}},
]
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, SERVER_ERROR = -32700, -32600, -32601, -32602, -32000


def public(payload: dict[str, Any]) -> dict[str, Any]:
    """A tool's reply: observation text, reward, done and the public metadata (task view, verdict)."""
    meta = payload["metadata"]
    return {"observation": payload["observation"]["text"], "reward": payload["reward"], "done": payload["done"],
            "valid_action": meta.get("valid_action", True), "episode_id": meta.get("episode_id"),
            "task": meta.get("task"), "verdict": meta.get("verdict")}


async def call_tool(pool: SessionPool, session: Session, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Run one env tool on `session`; unknown tools and bad arguments are a `SessionError`."""
    if not isinstance(arguments, dict):
        raise SessionError("VALIDATION_ERROR", "tool arguments must be an object")
    if name == "reset":
        extra = sorted(set(arguments) - {"task_index", "seed", "episode_id"})
        if extra:
            raise SessionError("VALIDATION_ERROR", f"reset takes task_index, seed, episode_id; got {extra}")
        return public(await pool.reset(session, arguments))
    if name == "step":
        if set(arguments) != {"text"}:
            raise SessionError("VALIDATION_ERROR", 'step takes exactly {"text": "<the model output>"}')
        return public(await pool.step(session, arguments["text"]))
    if name == "state":
        return pool.state(session)
    raise SessionError("VALIDATION_ERROR", f"unknown tool {str(name)[:64]!r}; tools: reset, step, state")


def tool_result(value: dict[str, Any]) -> dict[str, Any]:
    """MCP's CallToolResult, plus `data`, where OpenEnv's client reads a tool's return value."""
    return {"content": [{"type": "text", "text": json.dumps(value)}], "structuredContent": value, "isError": False,
            "data": value}


def _reply(request_id: Any, result: Any = None, error: tuple[int, str, dict[str, Any] | None] | None = None) -> dict:
    reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
    if error is None:
        reply["result"] = result
    else:
        code, message, data = error
        reply["error"] = {"code": code, "message": message, **({"data": data} if data else {})}
    return reply


def _valid_request(request: Any) -> bool:
    return (isinstance(request, dict) and request.get("jsonrpc") == "2.0" and isinstance(request.get("method"), str)
            and isinstance(request.get("params", {}), dict) and isinstance(request.get("id"), str | int | None)
            and not isinstance(request.get("id"), bool))


async def handle(pool: SessionPool, request: Any, *, client: str, session: Session | None = None) -> dict[str, Any]:
    """One JSON-RPC request -> its reply. `session` is the WebSocket's own, when the request came on one."""
    if not _valid_request(request):
        request_id = request.get("id") if isinstance(request, dict) else None
        return _reply(request_id if isinstance(request_id, str | int) else None,
                      error=(INVALID_REQUEST, "not a JSON-RPC 2.0 request (jsonrpc, method, params, id)", None))
    method, params, request_id = request["method"], request.get("params") or {}, request.get("id")
    try:
        if method == "tools/list":
            return _reply(request_id, {"tools": ENV_TOOLS})
        if method == "openenv/session/create":
            return _reply(request_id, {"session_id": (session or pool.open(client)).id})
        if method == "openenv/session/close":
            target = params.get("session_id")
            if not isinstance(target, str) or (session is not None and target == session.id):
                return _reply(request_id, error=(INVALID_PARAMS, "session_id of another (non-WebSocket) session", None))
            pool.close(target)
            return _reply(request_id, {"session_id": target, "closed": True})
        if method == "tools/call":
            return _reply(request_id, tool_result(await _call(pool, params, client, session)))
    except SessionError as exc:
        return refused(exc, request_id)
    return _reply(request_id, error=(METHOD_NOT_FOUND, f"method not found: {method[:64]!r}", None))


async def _call(pool: SessionPool, params: dict[str, Any], client: str, session: Session | None) -> dict[str, Any]:
    name, arguments, target = params.get("name"), params.get("arguments") or {}, params.get("session_id")
    if session is not None:
        return await call_tool(pool, session, name, arguments)
    if isinstance(target, str):
        return await call_tool(pool, await pool.resume(target), name, arguments)
    temporary = pool.open(client, temporary=True)
    try:
        return await call_tool(pool, temporary, name, arguments)
    finally:
        pool.close(temporary.id)


def refused(exc: SessionError, request_id: Any = None) -> dict[str, Any]:
    """A call the server turned away, with its error code (and the wait, when waiting helps)."""
    data: dict[str, Any] = {"code": exc.code}
    if exc.retry_after_s is not None:
        data["retry_after_s"] = round(exc.retry_after_s, 3)
    return _reply(request_id, error=(SERVER_ERROR, str(exc), data))


def parse_error(message: str) -> dict[str, Any]:
    """The reply to a request that is not JSON (or nested too deeply)."""
    return _reply(None, error=(PARSE_ERROR, f"parse error: {message}", None))
