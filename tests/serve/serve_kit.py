"""Shared by the serve tests: the token, a local TestClient and a live server on a free loopback port."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn
from fastapi.testclient import TestClient

TOKEN = "t0ken-for-tests"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
ENV = "rlvr/MathArithmetic-v0"


def local_client(app: Any) -> TestClient:
    """A TestClient that talks like a local client: loopback Host name, the token in the header."""
    return TestClient(app, base_url="http://127.0.0.1", headers=AUTH)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def live(app: Any) -> Iterator[str]:
    """Serve `app` with uvicorn on 127.0.0.1 in a thread; yields its base URL."""
    port = free_port()
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    while not srv.started:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        srv.should_exit = True
        thread.join(timeout=10)
