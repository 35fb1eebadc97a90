"""`rlvr-gym serve ENV_ID`: any registered env over HTTP and WebSocket, wire-compatible with OpenEnv.

OpenEnv's protocol (what its `GenericEnvClient`, `MCPToolClient` and `openenv validate --url` speak): `GET /health`,
`GET /schema`, `GET /metadata`, `GET /openapi.json`, `WS /ws` with JSON frames
`{"type": "reset"|"step"|"state"|"close"|"mcp", "data": {...}}`, answered in order with
`{"type": "observation"|"state"|"mcp"|"error", "data": ...}`, and MCP as JSON-RPC on `POST /mcp` and `WS /mcp`
(`mcp_rpc.py`). An action is `{"text": "<the model's raw output>"}`.

Over plain HTTP, as OpenEnv's own server: `POST /step` without a session is one stateless step on a fresh env (the
task named by `task_index`/`seed`, else a drawn seed, reported back) and `GET /state` without one is a fresh env's
state. Multi-turn HTTP episodes use the session that `POST /reset` returns in `metadata.session_id` (`POST /step`
and `GET /state` with it; `POST /close`); resets that are never continued cost nothing lasting (`sessions.py`).
`episode_id` given to a reset is kept and reported in every reply and in the state.
Errors are an HTTP status plus `{"error": {"code", "message"}}` (codes as OpenEnv's: VALIDATION_ERROR,
SESSION_ERROR, CAPACITY_REACHED, EXECUTION_ERROR, FACTORY_ERROR, INVALID_JSON, UNKNOWN_TYPE; ours: RATE_LIMITED,
JSON_TOO_DEEP, and the guard's UNAUTHORIZED, HOST_NOT_ALLOWED, ORIGIN_NOT_ALLOWED, UNSUPPORTED_MEDIA_TYPE,
BODY_TOO_LARGE). A step after the episode ended is a 409 SESSION_ERROR naming its reward. Every request but
`/health` needs the launch token (`rlvr_gym.http_guard`, docs/serving.md).
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import JSONResponse

from ..http_guard import GuardPolicy, RequestRefused, client_of, guard, loads_bounded
from ..registry import env_info
from . import mcp_rpc
from .sessions import Session, SessionError, SessionLimits, SessionPool

API_VERSION = "1.0.0"  # the OpenEnv HTTP API generation this server follows (`openenv validate`: openenv-http/1.x)
MAX_BODY_BYTES = 4 << 20  # one action (model output) per request; check-env's fuzz goes to 1 MB
JSON_DEPTH = 64
ACTION_SCHEMA = {"type": "object", "properties": {"text": {"type": "string", "description": "raw model output"}},
                 "required": ["text"]}
OBSERVATION_SCHEMA = {"type": "object", "properties": {
    "messages": {"type": "array", "items": {"type": "object"}}, "text": {"type": "string"},
    "done": {"type": "boolean"}, "reward": {"type": ["number", "null"]}, "metadata": {"type": "object"}}}
STATE_SCHEMA = {"type": "object", "properties": {
    "session_id": {"type": ["string", "null"]}, "episode_id": {"type": ["string", "null"]},
    "env_id": {"type": "string"}, "step_count": {"type": "integer"}, "done": {"type": "boolean"},
    "task_id": {"type": ["string", "null"]}}}


def server_policy(token: str | None = None, **overrides: Any) -> GuardPolicy:
    """The env server's guard: JSON-only POSTs, /health open (it says only "healthy"), bounded bodies."""
    return GuardPolicy(**{"token": token, "open_paths": frozenset({"/health"}), "json_paths": ("/",),
                          "max_body_bytes": MAX_BODY_BYTES, "max_json_depth": JSON_DEPTH, **overrides})


def error_reply(exc: RequestRefused) -> JSONResponse:
    headers = {"Retry-After": str(max(1, round(exc.retry_after_s)))} if exc.retry_after_s is not None else None
    return JSONResponse(exc.body(), status_code=exc.status, headers=headers)


def frame_error(exc: RequestRefused) -> dict[str, Any]:
    data: dict[str, Any] = {"message": str(exc), "code": exc.code}
    if exc.retry_after_s is not None:
        data["retry_after_s"] = round(exc.retry_after_s, 3)
    return {"type": "error", "data": data}


def create_app(env_id: str, env_kwargs: dict[str, Any] | None = None, *, limits: SessionLimits | None = None,
               policy: GuardPolicy | None = None) -> FastAPI:
    """The server app; `policy` defaults to `server_policy()` (loopback Host names, no token)."""
    pool = SessionPool(env_id, env_kwargs, limits)
    info = env_info(env_id)
    app = FastAPI(title=f"rlvr-gym {env_id}", version=API_VERSION, docs_url=None, redoc_url=None)
    app.state.pool = pool
    guard(app, policy or server_policy())

    @app.exception_handler(RequestRefused)
    async def refused(_: Request, exc: RequestRefused) -> JSONResponse:
        return error_reply(exc)

    async def body(request: Request) -> dict[str, Any]:
        raw = await request.body()
        value = loads_bounded(raw, JSON_DEPTH) if raw else {}
        if not isinstance(value, dict):
            raise SessionError("VALIDATION_ERROR", "request body must be a JSON object")
        return value

    @app.get("/health")
    def health() -> dict[str, str]:
        return {"status": "healthy"}

    @app.get("/schema")
    def schema() -> dict[str, Any]:
        return {"action": ACTION_SCHEMA, "observation": OBSERVATION_SCHEMA, "state": STATE_SCHEMA,
                "reset_observation": OBSERVATION_SCHEMA}

    @app.get("/metadata")
    def metadata() -> dict[str, Any]:
        return {"name": env_id, "description": info.description, "family": info.family,
                "sessions": len(pool.sessions), "max_sessions": pool.max_sessions}

    @app.post("/reset")
    async def http_reset(request: Request) -> dict[str, Any]:
        data = await body(request)
        client = client_of(request.scope)
        pool.charge_reset(client)  # before building an env: a flood of resets costs no env construction
        target = data.get("session_id")
        session = await pool.resume(target) if isinstance(target, str) else pool.open(client)
        try:
            return await pool.reset(session, data, charged=True)
        except SessionError:
            if not isinstance(target, str):
                pool.close(session.id)
            raise

    @app.post("/step")
    async def http_step(request: Request) -> dict[str, Any]:
        data = await body(request)
        session_id = data.get("session_id")
        if session_id is None:
            return await pool.step_once(client_of(request.scope), data)
        if not isinstance(session_id, str):
            raise SessionError("VALIDATION_ERROR", "session_id must be the string POST /reset returned")
        return await pool.step(await pool.resume(session_id), data.get("action"))

    @app.get("/state")
    async def http_state(session_id: str | None = None) -> dict[str, Any]:
        return pool.state_of(session_id)

    @app.post("/close")
    async def http_close(request: Request) -> dict[str, Any]:
        pool.close(str((await body(request)).get("session_id", "")))
        return {"closed": True}

    @app.post("/mcp")
    async def http_mcp(request: Request) -> dict[str, Any]:
        raw = await request.body()
        try:
            value = loads_bounded(raw, JSON_DEPTH)
        except RequestRefused as exc:
            return mcp_rpc.parse_error(str(exc))
        return await mcp_rpc.handle(pool, value, client=client_of(request.scope))

    @app.websocket("/mcp")
    async def ws_mcp(socket: WebSocket) -> None:
        await serve_socket(socket, pool, rpc_only=True)

    @app.websocket("/ws")
    async def ws(socket: WebSocket) -> None:
        await serve_socket(socket, pool, rpc_only=False)

    return app


async def serve_socket(socket: WebSocket, pool: SessionPool, *, rpc_only: bool) -> None:
    """One session per socket (or the session `?session_id=` names, held as attached while the socket lives)."""
    await socket.accept()
    attach = socket.query_params.get("session_id")
    client = client_of(socket.scope)
    try:
        session = await pool.resume(attach) if attach else pool.open(client, attached=True)
    except SessionError as exc:
        await socket.send_json(mcp_rpc.refused(exc) if rpc_only else frame_error(exc))
        await socket.close(code=1013 if exc.status in (429, 503) else 1008)
        return
    was_attached, session.attached = session.attached, True
    try:
        while True:
            message = await socket.receive()
            if message["type"] == "websocket.disconnect":
                break
            raw = message.get("text") if message.get("text") is not None else message.get("bytes") or b""
            reply = await (handle_rpc_frame(pool, session, raw) if rpc_only else handle_frame(pool, session, raw))
            if reply is None:
                break
            await socket.send_json(reply)
    except WebSocketDisconnect:
        pass
    finally:
        session.attached = was_attached
        if not attach:
            pool.close(session.id)


async def handle_rpc_frame(pool: SessionPool, session: Session, raw: str | bytes) -> dict[str, Any]:
    """One JSON-RPC request on `WS /mcp` -> its reply, on the socket's session."""
    try:
        request = loads_bounded(raw, JSON_DEPTH)
    except RequestRefused as exc:
        return mcp_rpc.parse_error(str(exc))
    return await mcp_rpc.handle(pool, request, client=session.client, session=session)


async def handle_frame(pool: SessionPool, session: Session, raw: str | bytes) -> dict[str, Any] | None:
    """One WebSocket request -> one reply (None closes the socket)."""
    try:
        frame = loads_bounded(raw, JSON_DEPTH)
    except RequestRefused as exc:
        return frame_error(exc)
    if not isinstance(frame, dict):
        return {"type": "error", "data": {"message": "frame must be a JSON object", "code": "VALIDATION_ERROR"}}
    kind, data = frame.get("type"), frame.get("data") or {}
    try:
        if kind == "reset":
            return {"type": "observation", "data": await pool.reset(session, data if isinstance(data, dict) else {})}
        if kind == "step":
            action = data.get("action", data) if isinstance(data, dict) else data
            return {"type": "observation", "data": await pool.step(session, action)}
        if kind == "state":
            return {"type": "state", "data": pool.state(session)}
        if kind == "mcp":
            return {"type": "mcp", "data": await mcp_rpc.handle(pool, data, client=session.client, session=session)}
        if kind == "close":
            return None
    except SessionError as exc:
        return frame_error(exc)
    return {"type": "error", "data": {"message": f"unknown message type {str(kind)[:64]!r}", "code": "UNKNOWN_TYPE"}}
