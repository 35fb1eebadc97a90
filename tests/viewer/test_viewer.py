"""The run viewer: summaries, filters, episodes with frames, diffs, curves, escaping, token guard, real browser."""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
import time

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient

from rlvr_gym.agents.scripted import ConstantAgent, OracleAgent
from rlvr_gym.rollout import collect_sync
from rlvr_gym.types import Episode, EpisodeError, ErrorKind, Message, Turn, Verdict
from rlvr_gym.viewer.app import create_app, viewer_policy

ATTACK = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2">"><b>bold</b>'


@pytest.fixture(scope="module")
def runs(tmp_path_factory, monkeypatch_module=None):
    root = tmp_path_factory.mktemp("runs")
    good, bad, frames = root / "good", root / "bad", root / "frames"
    collect_sync("rlvr/MathArithmetic-v0", OracleAgent(), tasks=12, output=good / "episodes.jsonl")
    collect_sync("rlvr/MathArithmetic-v0", ConstantAgent("\\boxed{0}"), tasks=12, output=bad / "episodes.jsonl")
    collect_sync("rlvr/SokobanFrames-v0", OracleAgent(), tasks=1, output=frames / "episodes.jsonl")
    hostile = Episode(episode_id="evil", env_id="rlvr/X-v0", task_id=ATTACK, group_id="g",
                      turns=[Turn(index=0, observation=[Message(role="user", content=ATTACK)], action=ATTACK)],
                      verdict=Verdict(reward=0.0, passed=False, feedback=ATTACK))
    errored = Episode(episode_id="down", env_id="rlvr/X-v0", task_id="t", group_id="g2",
                      error=EpisodeError(kind=ErrorKind.POLICY_ERROR, message="endpoint down"))
    with (bad / "episodes.jsonl").open("a") as f:
        f.write(hostile.model_dump_json() + "\n" + errored.model_dump_json() + "\n{not json\n")
    (good / "metrics.jsonl").write_text("".join(json.dumps({"step": s, "reward_mean": 0.5, "reward_std": 0.0,
                                                            "acr": 1.0}) + "\n" for s in range(5)))
    return good, bad, frames


@pytest.fixture(scope="module")
def client(runs, tmp_path_factory):
    os.environ["RLVR_GYM_CACHE"] = str(tmp_path_factory.mktemp("cache"))
    return TestClient(create_app(runs), base_url="http://127.0.0.1")


def test_summary_and_table(client):
    page = client.get("/run/1").text
    assert "policy_error: 1" in page and "unreadable lines</th><td colspan=\"5\">15<" in page
    assert "invalid" in page or "scored" in page
    assert client.get("/").status_code == 200


def test_filters_and_pagination(client):
    passed = client.get("/run/0", params={"passed": "1"}).text
    assert "12 matching episodes" in passed
    errors = client.get("/run/1", params={"outcome": "error"}).text
    assert "1 matching episodes" in errors and "<td>policy_error</td>" in errors
    assert "0 matching episodes" in client.get("/run/1", params={"min_reward": "0.5"}).text


def test_model_text_is_shown_as_text(client):
    pos = 12  # the hostile episode follows the 12 constant-agent episodes
    page = client.get(f"/run/1/episode/{pos}").text
    assert "<script>" not in page and "<img src=x" not in page and "<b>bold</b>" not in page
    assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in page
    assert "script-src" not in client.get("/").headers["content-security-policy"]


def test_episode_with_frames_shows_the_animation(client):
    page = client.get("/run/2/episode/0").text
    assert '<img class="frame" alt="frames" src="data:image/png;base64,' in page


def test_diff_lists_flipped_tasks(client):
    page = client.get("/diff", params={"a": 0, "b": 1}).text
    assert "12 flipped" in page


def test_curves_raise_collapse_alarms(client):
    page = client.get("/run/0/curves").text
    assert "reward variance collapsed" in page and "advantage collapse" in page and "<svg" in page


def test_missing_things_are_404(client):
    assert client.get("/run/9").status_code == 404
    assert client.get("/run/0/episode/999").status_code == 404


def test_token_guard(runs):
    guarded = TestClient(create_app(runs, policy=viewer_policy("s3cret")), base_url="http://127.0.0.1")
    assert guarded.get("/").status_code == 401
    assert guarded.get("/", params={"token": "s3cret"}).status_code == 200
    assert guarded.get("/").status_code == 200  # the printed URL's token is kept in this port's cookie


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_real_browser(runs):
    if not shutil.which("chromium"):  # scripts/test.sh installs it and sets RLVR_REQUIRE_BROWSER=1: no silent skip
        missing = "Debian chromium not installed (scripts/setup_browser.sh)"
        pytest.fail(missing) if os.environ.get("RLVR_REQUIRE_BROWSER") else pytest.skip(missing)
    uvicorn = pytest.importorskip("uvicorn")
    sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(runs), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    base = f"http://127.0.0.1:{port}"
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=[
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run"])
            page = browser.new_page()
            page.goto(f"{base}/run/1")
            page.select_option("select[name=outcome]", "error")
            page.click("#apply")
            assert "1 matching episodes" in page.inner_text("#count")
            page.goto(f"{base}/run/1")
            page.fill("input[name=q]", "evil")
            page.click("#apply")
            page.click("a.episode-link")
            assert ATTACK in page.inner_text("pre.action")  # shown literally
            assert page.evaluate("window.pwned === undefined")  # and never run
            page.goto(f"{base}/run/2/episode/0")
            image = page.locator("img.frame")
            assert image.count() >= 1 and page.evaluate("document.querySelector('img.frame').naturalWidth") > 0
            page.goto(f"{base}/")
            page.click("text=show flipped tasks")
            assert "12 flipped" in page.content()
            browser.close()
    finally:
        server.should_exit = True
        thread.join(timeout=10)
