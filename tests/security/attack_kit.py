"""Tools the attack tests share: servers in threads with a request log, an attacker's web site on another loopback
port, raw HTTP for what clients normally refuse to send (lying Content-Length, non-ASCII headers)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SECRET = "model-output-the-attacker-wants"
CHROMIUM = "/usr/bin/chromium"
# Chromium's own Local Network Access checks are off so that our guard, not this browser's extra defence, is what
# the tests exercise (Firefox and older Chromium have no such checks, and a user can grant a page the permission).
# rebind.test resolves to 127.0.0.1: a page served as http://rebind.test:PORT is what DNS rebinding gives an attacker.
BROWSER_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
                "--host-resolver-rules=MAP rebind.test 127.0.0.1",
                "--disable-features=LocalNetworkAccessChecks,BlockInsecurePrivateNetworkRequests,"
                "PrivateNetworkAccessSendPreflights"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Recorder:
    """Outermost ASGI layer: logs every request's method, path, query and final status (101 for an accepted WS)."""

    def __init__(self, app: Any) -> None:
        self.app, self.log = app, []

    async def __call__(self, scope, receive, send):
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        entry = {"kind": scope["type"], "method": scope.get("method", "WS"), "path": scope["path"],
                 "query": scope.get("query_string", b"").decode("latin-1"), "status": None}
        self.log.append(entry)

        async def watch(message):
            if message["type"] in ("http.response.start", "websocket.http.response.start"):
                entry["status"] = message["status"]
            elif message["type"] == "websocket.accept":
                entry["status"] = 101
            elif message["type"] == "websocket.close" and entry["status"] is None:
                entry["status"] = 403
            await send(message)

        return await self.app(scope, receive, watch)


@contextmanager
def served(app: Any) -> Iterator[tuple[int, Recorder]]:
    """Run `app` with uvicorn on a free loopback port in a thread; yields (port, its request recorder)."""
    import uvicorn

    recorder = Recorder(app)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(recorder, host="127.0.0.1", port=port, log_level="warning",
                                          ws_max_size=8 << 20))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield port, recorder
    finally:
        server.should_exit = True
        thread.join(10)


@contextmanager
def attacker_site(html: str) -> Iterator[str]:
    """A web site on another loopback port (another origin, same site) serving one page; yields its URL."""
    page = html.encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's naming)
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def raw_http(port: int, head: bytes, body: bytes = b"", timeout: float = 10.0) -> tuple[int, bytes]:
    """Send exactly these bytes (request line + headers, then `body`) and return (status, response body)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(head.rstrip(b"\r\n") + b"\r\nConnection: close\r\n\r\n" + body)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    status_line, _, rest = data.partition(b"\r\n")
    return int(status_line.split()[1]), rest.partition(b"\r\n\r\n")[2]


def run_in_browser(browser: Any, url: str, wait_for: str = "window.done === true", timeout_ms: int = 15000) -> Any:
    """Open `url` in a fresh context and wait until the page's script says it is done; returns `window.results`."""
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(url)
        page.wait_for_function(wait_for, timeout=timeout_ms)
        return page.evaluate("window.results")
    finally:
        context.close()


def write_run(root: Any) -> Any:
    """A run folder whose one episode holds `SECRET` as the model's output (what an attacker would read)."""
    from rlvr_gym.types import Episode, Message, Turn, Verdict

    episode = Episode(episode_id="e0", env_id="rlvr/X-v0", task_id="t0", group_id="g",
                      turns=[Turn(index=0, observation=[Message(role="user", content="q")], action=SECRET)],
                      verdict=Verdict(reward=1.0, passed=True))
    (root / "episodes.jsonl").write_text(episode.model_dump_json() + "\n")
    return root


def flood(send: Callable[[], Any], ok: Any, limited: Any, burst: float, rate: float, tries: int = 1000) -> list[Any]:
    """Call `send` until it has been refused (`limited`) a few times; asserts that no more calls got through than a
    bucket of `burst` refilled at `rate`/s allows over the time taken (so a slow machine cannot make it flaky)."""
    t0 = time.monotonic()
    outcomes: list[Any] = []
    while len(outcomes) < tries and outcomes.count(limited) < 3:
        outcomes.append(send())
    elapsed = time.monotonic() - t0
    assert outcomes.count(limited) >= 3, f"never limited in {len(outcomes)} calls"
    assert set(outcomes) <= {ok, limited}, set(outcomes)
    assert burst <= outcomes.count(ok) <= burst + rate * elapsed + 1, (outcomes.count(ok), elapsed)
    return outcomes
