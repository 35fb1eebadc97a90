"""The shop as a web site: FastAPI over the same `ShopSession` the text env uses, rendered as HTML.

One page model, two renderers: `shop.render_text` for the text env, `pages.render_html` here (and in the
env's `html` observation mode). Every page element is
escaped. A session is one episode (one goal); actions arrive as links, a search form and radio buttons, are turned
into the text env's own `search[...]` / `click[...]` strings and applied by `ShopSession.act`, so a purchase gets
exactly the reward the text env would give for the same actions. Unknown sessions and bad requests are 4xx.
Requests pass the shared guard (`rlvr_gym.http_guard`: launch token, Host allow-list, same-origin form posts,
JSON-only `/api/`, bounded bodies); new sessions are rate-limited per client. `serve.py` binds 127.0.0.1 unless told
otherwise.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Form, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from rlvr_gym.http_guard import GuardPolicy, RateLimiter, RequestRefused, client_of, guard, loads_bounded

from .pages import escape as _e
from .pages import render_html
from .shop import ShopSession, render_text
from .tasks import WebShopTasks
from .verifier import new_session

MAX_SESSIONS = 512
MAX_FIELD_CHARS = 2000
STARTS_PER_S = 10.0  # new sessions per second per client, in bursts of 64: a flood cannot churn the whole LRU
CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; form-action 'self'"


@dataclass
class WebSession:
    task_index: int
    shop: ShopSession
    actions: list[str] = field(default_factory=list)


class SessionStore:
    """Bounded LRU of live sessions (a flood of new sessions evicts the oldest, never exhausts memory)."""

    def __init__(self, limit: int = MAX_SESSIONS) -> None:
        self.limit = limit
        self._items: OrderedDict[str, WebSession] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, session: WebSession) -> str:
        sid = secrets.token_urlsafe(12)
        with self._lock:
            self._items[sid] = session
            while len(self._items) > self.limit:
                self._items.popitem(last=False)
        return sid

    def get(self, sid: str) -> WebSession | None:
        with self._lock:
            session = self._items.get(sid)
            if session is not None:
                self._items.move_to_end(sid)
            return session


def site_policy(token: str | None = None) -> GuardPolicy:
    """JSON-only `/api/`, small bodies (a search form or one action), the rest of the guard's defaults."""
    return GuardPolicy(token=token, json_paths=("/api/",), max_body_bytes=64 << 10, max_json_depth=16)


def create_app(policy: GuardPolicy | None = None, max_sessions: int = MAX_SESSIONS, **source_kwargs: Any) -> FastAPI:
    """The FastAPI app; `policy` defaults to `site_policy()` (loopback Host names, no token); `source_kwargs`
    configure the goals (split, seed, catalog_size, data, engine)."""
    source = WebShopTasks(**source_kwargs)
    store = SessionStore(max_sessions)
    starts = RateLimiter(STARTS_PER_S, 64)
    app = FastAPI(title="rlvr-gym WebShop", docs_url=None, redoc_url=None, openapi_url=None)

    def page_response(body: str, status: int = 200) -> HTMLResponse:
        return HTMLResponse(body, status_code=status, headers={"Content-Security-Policy": CSP})

    def error(status: int, message: str, request: Request) -> Response:
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": message}, status_code=status)
        return page_response(f"<!doctype html><p id='message'>{_e(message)}</p>", status)

    @app.middleware("http")
    async def no_tracebacks(request: Request, call_next):
        try:
            return await call_next(request)
        except Exception:  # a bug must not leak a traceback or a 500 to a client probing the shop
            return error(400, "request could not be handled", request)

    guard(app, policy or site_policy())

    @app.exception_handler(RequestRefused)
    async def refused(request: Request, exc: RequestRefused):
        return error(exc.status, str(exc), request)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError):
        return error(422, "invalid request parameters", request)

    def lookup(sid: str) -> WebSession | None:
        return store.get(sid) if len(sid) <= 64 else None

    def start(task: int, request: Request) -> str:
        if not 0 <= task < 10_000_000:
            raise ValueError("task index out of range")
        starts.take(client_of(request.scope), "new sessions")
        return store.add(WebSession(task, new_session(source.task(task))))

    def apply(session: WebSession, action: str) -> str:
        outcome = session.shop.act(action)
        if outcome.valid:
            session.actions.append(action)
        return "" if outcome.valid else outcome.message

    # ---- HTML ----------------------------------------------------------------------------------------------------
    @app.get("/", response_class=HTMLResponse)
    async def home() -> HTMLResponse:
        return page_response(
            "<!doctype html><h2>WebShop</h2><form method='get' action='/start'>Task "
            "<input name='task' type='number' value='0' min='0'>"
            "<button class='btn' type='submit'>Start</button></form>"
        )

    @app.get("/start")
    async def start_html(request: Request, task: int = 0) -> Response:
        try:
            sid = start(task, request)
        except ValueError as exc:
            return error(400, str(exc), request)
        return RedirectResponse(f"/s/{sid}", status_code=303)

    @app.get("/s/{sid}")
    async def show(sid: str, request: Request) -> Response:
        session = lookup(sid)
        if session is None:
            return error(404, "no such session", request)
        purchase = session.shop.purchase
        return page_response(render_html(session.shop.page(), sid, reward=purchase.reward if purchase else None))

    def act_html(sid: str, action: str, request: Request) -> Response:
        session = lookup(sid)
        if session is None:
            return error(404, "no such session", request)
        if len(action) > MAX_FIELD_CHARS:
            return error(413, "action too long", request)
        message = apply(session, action)
        if message:
            return page_response(render_html(session.shop.page(), sid, message=message), 400)
        return RedirectResponse(f"/s/{sid}", status_code=303)

    @app.get("/s/{sid}/click")
    async def click(sid: str, request: Request, target: str = "") -> Response:
        return act_html(sid, f"click[{target}]", request)

    @app.post("/s/{sid}/search")
    async def search(sid: str, request: Request, search_query: str = Form("")) -> Response:
        return act_html(sid, f"search[{search_query}]", request)

    # ---- JSON API (agents over HTTP) -----------------------------------------------------------------------------
    def state(session: WebSession) -> dict[str, Any]:
        page = session.shop.page()
        purchase = session.shop.purchase
        return {
            "page": page.kind,
            "observation": render_text(page),
            "clickables": list(page.clickables()),
            "has_search_bar": page.has_search_bar,
            "done": purchase is not None,
            "reward": purchase.reward if purchase else None,
            "components": purchase.components if purchase else None,
        }

    @app.post("/api/sessions")
    async def api_start(request: Request) -> Response:
        try:
            body = loads_bounded(await request.body(), 16)
            sid = start(int(body.get("task", 0)) if isinstance(body, dict) else -1, request)
        except (ValueError, TypeError, OverflowError):
            return error(400, "body must be a JSON object with an integer 'task'", request)
        return JSONResponse({"session": sid, **state(store.get(sid))})  # type: ignore[arg-type]

    @app.get("/api/sessions/{sid}")
    async def api_state(sid: str, request: Request) -> Response:
        session = lookup(sid)
        return error(404, "no such session", request) if session is None else JSONResponse(state(session))

    @app.post("/api/sessions/{sid}/step")
    async def api_step(sid: str, request: Request) -> Response:
        session = lookup(sid)
        if session is None:
            return error(404, "no such session", request)
        body = loads_bounded(await request.body(), 16)
        action = body.get("action") if isinstance(body, dict) else None
        if not isinstance(action, str):
            return error(400, "body must be a JSON object with a string 'action'", request)
        message = apply(session, action)
        return JSONResponse({"valid": not message, "message": message, **state(session)})

    return app
