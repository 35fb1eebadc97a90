"""`rlvr-gym serve-webshop` attacked with other sites' requests (forged Origin, the user's cookie from another
site), DNS-rebinding Host names, non-JSON and oversized bodies, deep JSON, bad tokens and a flood of new sessions."""

from __future__ import annotations

import pytest
from attack_kit import flood, raw_http, served
from fastapi.testclient import TestClient

from rlvr_gym.envs.webshop.site import STARTS_PER_S, create_app, site_policy

TOKEN = "shop-attack-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
JSON = {"content-type": "application/json"}


@pytest.fixture(scope="module")
def app():
    return create_app(site_policy(TOKEN), catalog_size=60)


@pytest.fixture()
def shop(app):
    return TestClient(app, base_url="http://127.0.0.1", headers=AUTH, follow_redirects=False)


def start(shop) -> str:
    response = shop.get("/start?task=1")
    assert response.status_code == 303
    return response.headers["location"].rsplit("/", 1)[1]


def test_other_sites_cannot_act_in_the_users_session(app, shop):
    sid = start(shop)
    search = f"/s/{sid}/search"
    for origin in ("http://127.0.0.1:1", "null", "http://rebind.test"):
        assert shop.post(search, data={"search_query": "x"}, headers={"origin": origin}).status_code == 403, origin
    assert shop.post(search, data={"search_query": "x"}, headers={"origin": "http://127.0.0.1"}).status_code == 303
    cookie_only = TestClient(app, base_url="http://127.0.0.1", follow_redirects=False)
    assert cookie_only.get("/", params={"token": TOKEN}).status_code == 200  # the user opened the printed URL
    for site in ("same-site", "cross-site"):  # e.g. <img src="http://127.0.0.1:3000/start"> on another port
        assert cookie_only.get("/start?task=2", headers={"sec-fetch-site": site}).status_code == 401, site
    assert cookie_only.get("/start?task=2", headers={"sec-fetch-site": "same-origin"}).status_code == 303


def test_json_api_takes_only_bounded_json(shop):
    assert shop.post("/api/sessions", content=b'{"task": 1}', headers={"content-type": "text/plain"}).status_code == 415
    assert shop.post("/api/sessions", data={"task": "1"}).status_code == 415
    for depth in (20, 20_000):  # beyond the site's 16 levels; far beyond Python's recursion limit
        deep = shop.post("/api/sessions", content=b"[" * depth + b"]" * depth, headers=JSON)
        assert deep.status_code == 400 and "JSON_TOO_DEEP" in deep.text
    assert shop.post("/api/sessions", content=b" " * (65 << 10), headers=JSON).status_code == 413
    sid = shop.post("/api/sessions", json={"task": 1}).json()["session"]
    assert shop.post(f"/api/sessions/{sid}/step", json={"action": "search[" + "a" * 70_000 + "]"}).status_code == 413


def test_host_tokens_and_a_lying_content_length(app):
    with served(app) as (port, _):
        for host in (b"rebind.test", b"evil.example:%d" % port, b"localhost.evil.test"):
            assert raw_http(port, b"GET / HTTP/1.1\r\nHost: " + host + b"\r\nAuthorization: Bearer "
                            + TOKEN.encode())[0] == 403, host
        for bad in (b"Authorization: Bearer \xc3\xa4", b"Cookie: rlvr-token-%d=\xff" % port, b"X-Token: " + TOKEN.encode()):
            assert raw_http(port, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n" + bad)[0] == 401, bad
        assert raw_http(port, b"GET /?token=%E2%82%AC HTTP/1.1\r\nHost: 127.0.0.1")[0] == 401
        status, _ = raw_http(port, b"POST /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"
                             b"\r\nAuthorization: Bearer " + TOKEN.encode() + b"\r\nContent-Length: 300000000")
        assert status == 413


def test_a_flood_of_new_sessions_is_rate_limited(app):
    flooder = TestClient(app, base_url="http://127.0.0.1", headers=AUTH, follow_redirects=False,
                         client=("10.9.9.9", 1))
    flood(lambda: flooder.get("/start?task=0").status_code, 303, 429, burst=64, rate=STARTS_PER_S)
    calm = TestClient(app, base_url="http://127.0.0.1", headers=AUTH, follow_redirects=False, client=("10.9.9.8", 1))
    assert calm.get("/start?task=0").status_code == 303  # per client: others are not locked out
