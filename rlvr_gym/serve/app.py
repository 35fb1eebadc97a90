"""`rlvr-gym serve ENV_ID`: any registered env over HTTP and WebSocket, wire-compatible with OpenEnv.

OpenEnv's protocol (what its `GenericEnvClient` speaks): `GET /health`, `GET /schema`, `GET /metadata`, and
`WS /ws` with JSON frames `{"type": "reset"|"step"|"state"|"close", "data": {...}}`, answered in order with
`{"type": "observation"|"state"|"error", "data": ...}`. An action is `{"text": "<the model's raw output>"}`.
Over plain HTTP, `POST /reset` opens a session and returns its id in `metadata.session_id`; `POST /step` and
`GET /state` continue it (OpenEnv's own HTTP routes are one-shot; a multi-turn episode needs the session).
Errors are an HTTP status plus `{"error": {"code", "message"}}` (codes as OpenEnv's: VALIDATION_ERROR,
SESSION_ERROR, CAPACITY_REACHED, EXECUTION_ERROR, FACTORY_ERROR, INVALID_JSON, UNKNOWN_TYPE).
"""

from __future__ import annotations

import hmac
import json
from typing import Any

from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import JSONResponse

from ..registry import env_info
from .sessions import SessionError, SessionPool

ACTION_SCHEMA = {"type": "object", "properties": {"text": {"type": "string", "description": "raw model output"}},
                 "required": ["text"]}
OBSERVATION_SCHEMA = {"type": "object", "properties": {
    "messages": {"type": "array", "items": {"type": "object"}}, "text": {"type": "string"},
    "done": {"type": "boolean"}, "reward": {"type": ["number", "null"]}, "metadata": {"type": "object"}}}
STATE_SCHEMA = {"type": "object", "properties": {"session_id": {"type": "string"}, "env_id": {"type": "string"},
                                                  "step_count": {"type": "integer"}, "done": {"type": "boolean"},
                                                  "task_id": {"type": ["string", "null"]}}}


def error_body(exc: SessionError) -> dict[str, Any]:
    return {"error": {"code": exc.code, "message": str(exc)}}


def create_app(env_id: str, env_kwargs: dict[str, Any] | None = None, *, max_sessions: int = 64,
               idle_s: float = 600.0, token: str | None = None) -> FastAPI:
    pool = SessionPool(env_id, env_kwargs, max_sessions=max_sessions, idle_s=idle_s)
    info = env_info(env_id)
    app = FastAPI(title=f"rlvr-gym {env_id}", docs_url=None, redoc_url=None)
    app.state.pool = pool

    def authorised(headers: Any, query: Any) -> bool:
        if token is None:
            return True
        given = headers.get("authorization", "").removeprefix("Bearer ") or query.get("token", "")
        return bool(given) and hmac.compare_digest(given, token)

    @app.middleware("http")
    async def guard(request: Request, call_next: Any) -> Any:
        if not authorised(request.headers, request.query_params):
            return JSONResponse({"error": {"code": "UNAUTHORIZED", "message": "token required"}}, status_code=401)
        return await call_next(request)

    @app.exception_handler(SessionError)
    async def session_error(_: Request, exc: SessionError) -> JSONResponse:
        return JSONResponse(error_body(exc), status_code=exc.status)

    async def body(request: Request) -> dict[str, Any]:
        raw = await request.body()
        if not raw:
            return {}
        try:
            value = json.loads(raw)
        except ValueError as exc:
            raise SessionError("INVALID_JSON", f"request body is not JSON: {exc}") from exc
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
        session = pool.open()
        try:
            return await pool.reset(session, data)
        except SessionError:
            pool.close(session.id)
            raise

    @app.post("/step")
    async def http_step(request: Request) -> dict[str, Any]:
        data = await body(request)
        session_id = data.get("session_id")
        if not isinstance(session_id, str):
            raise SessionError("SESSION_ERROR", "POST /step needs the session_id that POST /reset returned")
        return await pool.step(pool.get(session_id), data.get("action"))

    @app.get("/state")
    def http_state(session_id: str) -> dict[str, Any]:
        return pool.state(pool.get(session_id))

    @app.post("/close")
    async def http_close(request: Request) -> dict[str, Any]:
        pool.close(str((await body(request)).get("session_id", "")))
        return {"closed": True}

    @app.websocket("/ws")
    async def ws(socket: WebSocket) -> None:
        if not authorised(socket.headers, socket.query_params):
            await socket.close(code=4401)
            return
        await socket.accept()
        attach = socket.query_params.get("session_id")
        try:
            session = pool.get(attach) if attach else pool.open()
        except SessionError as exc:
            await socket.send_json({"type": "error", "data": {"message": str(exc), "code": exc.code}})
            await socket.close()
            return
        try:
            while True:
                reply = await handle_frame(pool, session, await socket.receive_text())
                if reply is None:
                    break
                await socket.send_json(reply)
        except WebSocketDisconnect:
            pass
        finally:
            if not attach:
                pool.close(session.id)

    return app


async def handle_frame(pool: SessionPool, session: Any, raw: str) -> dict[str, Any] | None:
    """One WebSocket request -> one reply (None closes the socket)."""
    try:
        frame = json.loads(raw)
    except ValueError as exc:
        return {"type": "error", "data": {"message": f"frame is not JSON: {exc}", "code": "INVALID_JSON"}}
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
        if kind == "close":
            return None
    except SessionError as exc:
        return {"type": "error", "data": {"message": str(exc), "code": exc.code}}
    return {"type": "error", "data": {"message": f"unknown message type {kind!r}", "code": "UNKNOWN_TYPE"}}
