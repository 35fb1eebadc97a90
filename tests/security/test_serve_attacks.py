"""`rlvr-gym serve` attacked as a local client, a noisy client and a careless one would (what a web page in a real
browser can do is in test_browser_attacks.py).

Each test states the attack and fails if it gets through: a session opened, a WebSocket accepted, a 500, a body
read beyond its bound, sessions held beyond their caps.
"""

from __future__ import annotations

import json
import time

import pytest
import websockets.sync.client as ws_client
from attack_kit import flood, raw_http, served
from fastapi.testclient import TestClient
from websockets.exceptions import InvalidStatus

from rlvr_gym.serve.app import create_app, server_policy
from rlvr_gym.serve.sessions import SessionLimits

ENV = "rlvr/MathArithmetic-v0"
TOKEN = "serve-attack-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
JSON = {"content-type": "application/json"}


def client(app, **kwargs) -> TestClient:
    return TestClient(app, base_url="http://127.0.0.1", **kwargs)


@pytest.fixture(scope="module")
def live():
    """The server as the CLI runs it (a token), on a real port: (port, request log, session pool)."""
    app = create_app(ENV, policy=server_policy(TOKEN))
    with served(app) as (port, recorder):
        yield port, recorder, app.state.pool


def test_tokens_are_required_compared_safely_and_never_a_500(live):
    port, _, _ = live
    assert raw_http(port, b"GET /health HTTP/1.1\r\nHost: 127.0.0.1")[1] == b'{"status":"healthy"}'  # open, says nothing
    assert raw_http(port, b"GET /metadata HTTP/1.1\r\nHost: 127.0.0.1")[0] == 401
    for bad in (b"Authorization: Bearer wrong", b"Authorization: Bearer \xc3\xa4\xff", b"Authorization: Basic x",
                b"Cookie: rlvr-token-%d=\xe2\x82\xac" % port, b"Authorization: Bearer " + TOKEN.encode() + b"x"):
        assert raw_http(port, b"GET /metadata HTTP/1.1\r\nHost: 127.0.0.1\r\n" + bad)[0] == 401, bad
    for query in ("token=%C3%A4", "token=%FF", "token=", f"token={TOKEN[:-1]}"):
        assert raw_http(port, f"GET /metadata?{query} HTTP/1.1\r\nHost: 127.0.0.1".encode())[0] == 401, query
    assert raw_http(port, b"GET /metadata HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TOKEN.encode())[0] \
        == 200
    with pytest.raises(InvalidStatus) as refused:
        ws_client.connect(f"ws://127.0.0.1:{port}/ws", open_timeout=10)
    assert refused.value.response.status_code == 401


def test_host_and_origin_are_checked_on_http_and_websocket(live):
    port, _, pool = live
    for host in (b"rebind.test", b"rebind.test:%d" % port, b"127.0.0.1.nip.io", b"", b"[::2]"):
        assert raw_http(port, b"GET /health HTTP/1.1\r\nHost: " + host)[0] in (400, 403), host
    reset = b"POST /reset HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n" % port
    for origin in (b"http://127.0.0.1:1", b"null", b"http://rebind.test:%d" % port, b"https://127.0.0.1:%d" % port):
        status, _ = raw_http(port, reset + b"Authorization: Bearer " + TOKEN.encode() + b"\r\nOrigin: " + origin
                             + b"\r\nContent-Length: 2", b"{}")
        assert status == 403, origin
    with pytest.raises(InvalidStatus) as refused:
        ws_client.connect(f"ws://127.0.0.1:{port}/ws", additional_headers=AUTH, origin="http://127.0.0.1:1",
                          open_timeout=10)
    assert refused.value.response.status_code == 403
    with ws_client.connect(f"ws://127.0.0.1:{port}/ws", additional_headers=AUTH, origin=f"http://127.0.0.1:{port}",
                           open_timeout=10) as ws:  # the server's own origin is fine
        ws.send(json.dumps({"type": "state"}))
        assert json.loads(ws.recv())["type"] == "state"
    assert not pool.sessions


def test_json_endpoints_take_only_json_and_bounded_bodies(live):
    port, _, _ = live
    app_client = client(create_app(ENV), headers=AUTH)
    assert app_client.post("/reset", content=b'{"task_index": 0}', headers={"content-type": "text/plain"}) \
        .status_code == 415
    assert app_client.post("/reset", data={"task_index": "0"}).status_code == 415
    assert app_client.post("/step", content=b"x" * (5 << 20), headers=JSON).json()["error"]["code"] == "BODY_TOO_LARGE"
    t0 = time.monotonic()  # a 300 MB body announced: refused at the headers, nothing read or buffered
    status, body = raw_http(port, b"POST /reset HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                            b"Authorization: Bearer " + TOKEN.encode() + b"\r\nContent-Length: 300000000")
    assert status == 413 and b"BODY_TOO_LARGE" in body and time.monotonic() - t0 < 5
    deep = app_client.post("/reset", content=b"[" * 100_000 + b"]" * 100_000, headers=JSON)
    assert deep.status_code == 400 and deep.json()["error"]["code"] == "JSON_TOO_DEEP"
    medium = app_client.post("/reset", content=b'{"a":' * 70 + b"1" + b"}" * 70, headers=JSON)
    assert medium.json()["error"]["code"] == "JSON_TOO_DEEP"


def test_deep_and_binary_websocket_frames_are_errors_and_the_socket_lives_on(live):
    port, _, _ = live
    with ws_client.connect(f"ws://127.0.0.1:{port}/ws", additional_headers=AUTH, open_timeout=10) as ws:
        ws.send("[" * 200_000 + "]" * 200_000)
        assert json.loads(ws.recv())["data"]["code"] == "JSON_TOO_DEEP"
        ws.send(b'{"type": "state"}')
        assert json.loads(ws.recv())["type"] == "state"
        ws.send(json.dumps({"type": "reset", "data": {"task_index": 1}}))
        assert json.loads(ws.recv())["type"] == "observation"


def test_a_reset_flood_is_bounded_and_does_not_lock_out_for_long():
    limits = SessionLimits(max_sessions=4, per_client=3, reclaim_idle_s=0.5)
    app = create_app(ENV, {"max_attempts": 2}, limits=limits)
    pool = app.state.pool
    flooder = client(app, client=("10.0.0.3", 1000))
    codes = [flooder.post("/reset", json={}) for _ in range(70)]  # never continued, never closed
    assert {r.status_code for r in codes} <= {200, 429} and all(r.json()["error"]["code"] == "RATE_LIMITED"
                                                                for r in codes if r.status_code == 429)
    assert len(pool.sessions) <= 3  # resets that were never continued are evicted at once (rebuilt if continued)

    def mid_episode(who) -> int:  # a session holding state no reset can rebuild: one wrong attempt of two
        reply = who.post("/reset", json={})
        if reply.status_code == 200:
            sid = reply.json()["metadata"]["session_id"]
            reply = who.post("/step", json={"session_id": sid, "action": {"text": "\\boxed{-1}"}})
        return reply.status_code

    noisy = client(app, client=("10.0.0.1", 1000))
    other = client(app, client=("10.0.0.2", 1000))
    assert [mid_episode(noisy) for _ in range(4)] == [200, 200, 200, 429]  # per-client cap
    assert mid_episode(other) == 200  # others still get in
    refusal = other.post("/reset", json={})
    assert refusal.status_code == 503 and refusal.json()["error"]["code"] == "CAPACITY_REACHED"
    assert "retry-after" in refusal.headers and len(pool.sessions) == 4
    time.sleep(0.6)  # the abandoned sessions are idle now: a newcomer reclaims one instead of waiting 600 s
    assert other.post("/reset", json={}).status_code == 200 and len(pool.sessions) == 4


def test_reset_rate_is_limited_per_client_with_a_retry_hint():
    app = create_app(ENV, limits=SessionLimits(reset_rate=5.0))
    with client(app).websocket_connect("ws://127.0.0.1/ws") as ws:

        def reset() -> str:
            ws.send_text(json.dumps({"type": "reset", "data": {"task_index": 0}}))
            reply = json.loads(ws.receive_text())
            if reply["type"] == "error":
                assert reply["data"]["code"] == "RATE_LIMITED" and reply["data"]["retry_after_s"] > 0
            return reply["data"].get("code", "ok")

        flood(reset, "ok", "RATE_LIMITED", burst=64, rate=5.0)
