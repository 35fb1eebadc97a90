"""One request guard for every HTTP/WebSocket server rlvr-gym starts: env server, viewer, WebShop site, MCP.

Why: a loopback port is not private. Any web page open in the user's browser can send it simple cross-origin
requests and WebSockets, a DNS-rebinding page can even read the replies, and every local user can connect. So
each launch gets a random token (shown once, in the URL the CLI prints, then kept in a cookie for that port),
every request must name an allowed `Host`, browser requests that change state (and every WebSocket) must come
from the server's own origin, JSON endpoints take only `application/json` (which a cross-origin page cannot send
without a preflight that is never answered), and bodies are bounded before any app code reads them.
Threat model and defaults: docs/serving.md.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import hashlib
import hmac
import ipaddress
import json
import os
import secrets
import socket
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass, replace
from typing import Any, TextIO
from urllib.parse import parse_qsl, urlsplit

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
TOKEN_ENV = "RLVR_GYM_TOKEN"
CONNECTION_LIMIT = 512  # open connections per server; beyond it uvicorn answers 503 at once
# Referrer-Policy same-origin, not no-referrer: with no-referrer Chromium sends `Origin: null` on the page's own form
# posts, which the Origin check would then refuse.
SECURITY_HEADERS = [(b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"same-origin"),
                    (b"x-frame-options", b"DENY"), (b"cache-control", b"no-store")]


class RequestRefused(Exception):
    """A request the guard (or an app, with the same shapes) turns away: HTTP status, error code, message."""

    def __init__(self, status: int, code: str, message: str, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.retry_after_s = status, code, retry_after_s

    def body(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": str(self)}
        if self.retry_after_s is not None:
            error["retry_after_s"] = round(self.retry_after_s, 3)
        return {"error": error}


@dataclass(frozen=True)
class GuardPolicy:
    """What one server accepts. `token=None` turns the token off (tests, embedding); the CLIs always set one."""

    token: str | None = None
    hosts: frozenset[str] = LOOPBACK_HOSTS  # Host names accepted (no port); "*" accepts any
    origins: frozenset[str] = frozenset()  # cross-origin pages allowed to drive the server, e.g. "https://ui.lan"
    open_paths: frozenset[str] = frozenset()  # served without a token (must reveal nothing)
    json_paths: tuple[str, ...] = ()  # path prefixes whose POST/PUT/PATCH must be application/json
    max_body_bytes: int = 1 << 20
    max_json_depth: int = 64
    admit: Callable[[Scope, dict[str, bytes]], None] | None = None  # a server's own check; raises RequestRefused


def is_loopback(host: str) -> bool:
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def json_depth(value: Any) -> int:
    """Nesting depth of a parsed JSON value, without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def loads_bounded(raw: bytes | str, max_depth: int = 64) -> Any:
    """`json.loads` that answers a 400 for bad or too deeply nested JSON, never a RecursionError later on."""
    try:
        value = json.loads(raw)
    except RecursionError:
        value = None
        depth = sys.maxsize
    except ValueError as exc:
        raise RequestRefused(400, "INVALID_JSON", f"body is not JSON: {exc}") from None
    else:
        depth = json_depth(value)
    if depth > max_depth:
        raise RequestRefused(400, "JSON_TOO_DEEP", f"JSON nested deeper than {max_depth} levels")
    return value


class RateLimiter:
    """A token bucket per client: `rate` events a second on average, bursts of `burst` (bounded client table)."""

    def __init__(self, rate: float, burst: float, max_clients: int = 4096) -> None:
        self.rate, self.burst, self.max_clients = rate, burst, max_clients
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def wait_s(self, client: str) -> float:
        """Take one event for `client`: 0.0 when allowed, else the seconds until one would be."""
        now = time.monotonic()
        with self._lock:
            level, last = self._buckets.get(client, (self.burst, now))
            level = min(self.burst, level + (now - last) * self.rate)
            if len(self._buckets) >= self.max_clients and client not in self._buckets:
                self._buckets.clear()  # a flood of addresses resets everyone to a full bucket, never grows memory
            if level >= 1.0:
                self._buckets[client] = (level - 1.0, now)
                return 0.0
            self._buckets[client] = (level, now)
            return (1.0 - level) / self.rate if self.rate > 0 else float("inf")

    def take(self, client: str, what: str) -> None:
        wait = self.wait_s(client)
        if wait:
            raise RequestRefused(429, "RATE_LIMITED", f"too many {what}; retry in {wait:.1f}s", retry_after_s=wait)


def client_of(scope: Scope) -> str:
    """The peer address a request came from (every local process is one client on loopback)."""
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


def _headers(scope: Scope) -> dict[str, bytes]:
    return {k.decode("latin-1").lower(): v for k, v in scope.get("headers") or []}


def _host_name(value: str) -> str:
    """'127.0.0.1:8000' -> '127.0.0.1', '[::1]:8000' -> '::1', 'Localhost.' -> 'localhost'."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:].split("]", 1)[0]
    return value.rsplit(":", 1)[0].rstrip(".") if value.count(":") == 1 else value.rstrip(".")


def cookie_name(scope: Scope) -> str:
    """Cookies ignore ports: one name per port keeps two servers on one host from sharing (or clobbering) one."""
    server = scope.get("server")
    return f"rlvr-token-{server[1] if server else 0}"


class HttpGuard:
    """ASGI middleware applying a `GuardPolicy` to HTTP requests and WebSocket handshakes."""

    def __init__(self, app: Any, policy: GuardPolicy) -> None:
        self.app, self.policy = app, policy
        self._token = policy.token.encode("utf-8") if policy.token is not None else None
        # the cookie holds a digest of the token: always cookie-safe characters, and not the token itself
        self._cookie = hashlib.sha256(b"rlvr-gym cookie|" + self._token).hexdigest().encode() if self._token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        try:
            self._check_host(headers)
            self._check_origin(scope, headers)
            from_query = self._check_token(scope, headers)
            if self.policy.admit is not None:
                self.policy.admit(scope, headers)
            if scope["type"] == "http":
                receive = await self._bounded_body(scope, headers, receive)
        except RequestRefused as refusal:
            await self._refuse(scope, send, refusal)
            return
        if scope["type"] == "websocket":
            await self.app(scope, receive, send)
            return
        extra = list(SECURITY_HEADERS)
        if from_query:  # a person opened the printed URL: keep the token for this port's later requests
            extra.append((b"set-cookie", cookie_name(scope).encode() + b"=" + (self._cookie or b"")
                          + b"; Path=/; HttpOnly; SameSite=Strict"))

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = list(message.get("headers") or []) + extra
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def _check_host(self, headers: dict[str, bytes]) -> None:
        if "*" in self.policy.hosts:
            return
        host = _host_name(headers.get("host", b"").decode("latin-1"))
        if host not in self.policy.hosts:
            raise RequestRefused(403, "HOST_NOT_ALLOWED",
                                 f"Host {host[:100]!r} is not served here (DNS rebinding? a real name: --allowed-host)")

    def _check_origin(self, scope: Scope, headers: dict[str, bytes]) -> None:
        """WebSockets and unsafe methods from a browser must come from this server's own origin (or an allowed one)."""
        origin = headers.get("origin")
        if origin is None or (scope["type"] == "http" and scope["method"] in SAFE_METHODS):
            return
        text = origin.decode("latin-1").strip().lower()
        if text in self.policy.origins:
            return
        parts = urlsplit(text)
        scheme = "https" if scope.get("scheme") in ("https", "wss") else "http"
        same = parts.scheme == scheme and parts.netloc == headers.get("host", b"").decode("latin-1").strip().lower()
        if not same or ("*" not in self.policy.hosts and _host_name(parts.netloc) not in self.policy.hosts):
            raise RequestRefused(403, "ORIGIN_NOT_ALLOWED", f"cross-origin request from {text[:100]!r} refused")

    def _check_token(self, scope: Scope, headers: dict[str, bytes]) -> bool:
        """True when the token came in the query string (then it is set as this port's cookie)."""
        if self._token is None or scope["path"] in self.policy.open_paths:
            return False
        auth = headers.get("authorization", b"")
        if auth[:7].lower() == b"bearer " and hmac.compare_digest(auth[7:].strip(), self._token):
            return False
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"), encoding="latin-1"))
        if "token" in query and hmac.compare_digest(query["token"].encode("latin-1"), self._token):
            return scope["type"] == "http"
        # Credentials a browser may attach by itself (the cookie, cached Basic credentials) count only for requests
        # it marks same-origin or user-initiated; clients that are not browsers send no Sec-Fetch-Site.
        if headers.get("sec-fetch-site", b"same-origin") in (b"same-origin", b"none"):
            if auth[:6].lower() == b"basic " and self._basic_matches(auth[6:]):
                return False
            cookie = _cookie(headers.get("cookie", b""), cookie_name(scope))
            if cookie is not None and self._cookie is not None and hmac.compare_digest(cookie, self._cookie):
                return False
        raise RequestRefused(401, "UNAUTHORIZED", "a valid token is required (Authorization: Bearer, ?token=, or "
                                                  "the token as the password of http://user:TOKEN@host)")

    def _basic_matches(self, encoded: bytes) -> bool:
        """HTTP Basic with the token as password (or as user name with no password): what clients that take only a
        URL send for `http://rlvr:TOKEN@host:port` (OpenEnv's clients and `openenv validate --url`, via websockets
        and requests)."""
        assert self._token is not None
        try:
            user, _, password = base64.b64decode(encoded.strip(), validate=True).partition(b":")
        except (ValueError, binascii.Error):
            return False
        given = password or user
        return hmac.compare_digest(given, self._token)

    async def _bounded_body(self, scope: Scope, headers: dict[str, bytes], receive: Receive) -> Receive:
        """Read the whole body (at most max_body_bytes) before the app runs, and replay it to the app."""
        method, limit = scope["method"], self.policy.max_body_bytes
        if method in SAFE_METHODS:
            return receive
        declared = headers.get("content-length", b"0").decode("latin-1")
        if not declared.isdigit() or int(declared) > limit:
            raise RequestRefused(413, "BODY_TOO_LARGE", f"request bodies are limited to {limit} bytes")
        is_json = any(scope["path"].startswith(p) for p in self.policy.json_paths)
        media = headers.get("content-type", b"").split(b";")[0].strip().lower()
        if is_json and method != "DELETE" and media != b"application/json":
            raise RequestRefused(415, "UNSUPPORTED_MEDIA_TYPE", "this endpoint takes Content-Type: application/json")
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > limit:
                raise RequestRefused(413, "BODY_TOO_LARGE", f"request bodies are limited to {limit} bytes")
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        if is_json and body:
            loads_bounded(body, self.policy.max_json_depth)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        return replay

    async def _refuse(self, scope: Scope, send: Send, refusal: RequestRefused) -> None:
        body = json.dumps(refusal.body()).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                   *SECURITY_HEADERS]
        if refusal.retry_after_s is not None:
            headers.append((b"retry-after", str(max(1, round(refusal.retry_after_s))).encode()))
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": refusal.status, "headers": headers})
            await send({"type": "http.response.body", "body": body})
        elif "websocket.http.response" in (scope.get("extensions") or {}):
            await send({"type": "websocket.http.response.start", "status": refusal.status, "headers": headers})
            await send({"type": "websocket.http.response.body", "body": body})
        else:
            await send({"type": "websocket.close", "code": 1008})


def _cookie(header: bytes, name: str) -> bytes | None:
    for part in header.split(b";"):
        key, _, value = part.strip().partition(b"=")
        if key.decode("latin-1") == name:
            return value.strip()
    return None


def guard(app: Any, policy: GuardPolicy | None) -> Any:
    """Wrap a FastAPI/Starlette (or any ASGI) app; FastAPI apps get it as their outermost user middleware."""
    policy = policy or GuardPolicy()
    if hasattr(app, "add_middleware"):
        app.add_middleware(HttpGuard, policy=policy)
        return app
    return HttpGuard(app, policy)


# ---- command line: the one launch policy of `serve`, `view`, `serve-webshop` and `mcp --transport http` ----------


def add_server_arguments(parser: argparse.ArgumentParser, port: int) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="bind address (default: loopback only)")
    parser.add_argument("--port", type=int, default=port)
    parser.add_argument("--allow-remote", action="store_true", help="permit a non-loopback --host")
    parser.add_argument("--token", help=f"access token (default: ${TOKEN_ENV}, else a random one per launch)")
    parser.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                        help="also accept this Host name ('*': any; only with --allow-remote)")
    parser.add_argument("--allowed-origin", action="append", default=[], metavar="ORIGIN",
                        help="let pages from this origin (e.g. https://ui.lan:8080) drive the server")


def launch_policy(args: argparse.Namespace, prog: str, base: GuardPolicy | None = None) -> GuardPolicy | None:
    """`base` (the server's paths and limits) with this launch's token, Host and Origin lists; None (after saying
    why) when the bind is refused.

    Loopback by default; another address needs --allow-remote. The token is always on: --token, $RLVR_GYM_TOKEN,
    or a fresh random one (printed in the URL the CLI shows).
    """
    if not is_loopback(args.host) and not args.allow_remote:
        print(f"{prog}: binding {args.host} needs --allow-remote (a token is always required)", file=sys.stderr)
        return None
    if args.allowed_host and not args.allow_remote:
        print(f"{prog}: --allowed-host needs --allow-remote", file=sys.stderr)
        return None
    token = args.token or os.environ.get(TOKEN_ENV) or secrets.token_urlsafe(24)
    hosts = set(LOOPBACK_HOSTS) | {h.lower() for h in args.allowed_host}
    if args.allow_remote and args.host not in ("0.0.0.0", "::", ""):
        hosts.add(_host_name(args.host))
    if args.allow_remote:
        hosts |= {socket.gethostname().lower(), socket.getfqdn().lower()}
    origins = frozenset(o.strip().lower().rstrip("/") for o in args.allowed_origin)
    return replace(base or GuardPolicy(), token=token, hosts=frozenset(hosts), origins=origins)


def launch_url(host: str, port: int, path: str, token: str | None) -> str:
    shown = socket.gethostname() if host in ("0.0.0.0", "::", "") else host
    shown = f"[{shown}]" if ":" in shown else shown
    return f"http://{shown}:{port}{path}" + (f"?token={token}" if token else "")


def run_server(app: Any, args: argparse.Namespace, policy: GuardPolicy, what: str, path: str = "/",
               out: TextIO | None = None, notes: Iterable[str] = ()) -> int:
    """Print where `app` is (token in the URL, as Jupyter does) and serve it with uvicorn until Ctrl-C."""
    import uvicorn

    stream = out or sys.stdout
    print(f"{what} on {launch_url(args.host, args.port, path, policy.token)} (Ctrl-C to stop)", file=stream)
    for note in notes:
        print(note, file=stream)
    stream.flush()
    try:
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning", server_header=False,
                    ws_max_size=policy.max_body_bytes, limit_concurrency=CONNECTION_LIMIT)
    except KeyboardInterrupt:
        return 130
    return 0

