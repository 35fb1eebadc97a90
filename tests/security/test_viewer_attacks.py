"""`rlvr-gym view` attacked with bad tokens, framing and a hostile JSONL file (pages in a real browser on another
origin and DNS rebinding: test_browser_attacks.py).
"""

from __future__ import annotations

import json

import pytest
from attack_kit import raw_http, served, write_run
from fastapi.testclient import TestClient

from rlvr_gym.types import Episode
from rlvr_gym.viewer.app import create_app, viewer_policy

TOKEN = "viewer-attack-token"


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("RLVR_GYM_CACHE", str(tmp_path_factory.mktemp("cache")))
    with served(create_app([write_run(tmp_path_factory.mktemp("run"))], policy=viewer_policy(TOKEN))) as (port, log):
        yield port, log
    mp.undo()


def test_bad_tokens_are_401_never_500_and_pages_cannot_be_framed(live):
    port, _ = live
    for bad in (b"", b"Authorization: Bearer \xc3\xa4", b"Cookie: rlvr-token-%d=\xff\xfe" % port,
                b"Cookie: token=" + TOKEN.encode()):  # the cookie of another port is not this one's
        assert raw_http(port, b"GET /run/0 HTTP/1.1\r\nHost: 127.0.0.1\r\n" + bad)[0] == 401, bad
    for query in ("token=%E2%82%AC", "token=%00", "token=" + "a" * 5000):
        assert raw_http(port, f"GET /?{query} HTTP/1.1\r\nHost: 127.0.0.1".encode())[0] == 401
    client = TestClient(create_app([], policy=viewer_policy(TOKEN)), base_url="http://127.0.0.1")
    page = client.get("/", params={"token": TOKEN})
    assert page.status_code == 200 and page.headers["x-frame-options"] == "DENY"
    cookie = page.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert "script-src" not in page.headers["content-security-policy"]


def test_one_hostile_jsonl_line_is_a_bad_line_not_a_crash(tmp_path, monkeypatch):
    monkeypatch.setenv("RLVR_GYM_CACHE", str(tmp_path / "cache"))
    good = Episode(episode_id="ok", env_id="rlvr/X-v0", task_id="t", group_id="g").model_dump_json()
    lines = [good, json.dumps({"verdict": 5}), json.dumps({"error": "x", "turns": 7, "timings": []}),
             json.dumps({"sample_index": "x"}), json.dumps({"verdict": {"components": [1]}}),
             "[" * 100_000 + "]" * 100_000, "\udcff".encode("utf-8", "surrogatepass").decode("latin-1")]
    (tmp_path / "episodes.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    client = TestClient(create_app([tmp_path]), base_url="http://127.0.0.1")  # start-up used to die here
    page = client.get("/run/0").text
    assert "1 matching episodes" in page and "2, 3, 4, 5, 6, 7" in page
    assert client.get("/run/0/episode/0").status_code == 200
