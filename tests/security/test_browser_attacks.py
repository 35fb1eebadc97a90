"""Attacks from web pages in a real browser (Debian's Chromium, one launch for the module) on `rlvr-gym serve` and
`rlvr-gym view`: a page on another origin of the same machine, and a DNS-rebinding page.

Each fails if the attack gets through: the server log must show the attempts arrive and be refused, and nothing
may change (no session) or be read (no run data). Without the guard every one of these succeeds (checked by
removing each check in turn).
"""

from __future__ import annotations

import os

import pytest
from attack_kit import BROWSER_ARGS, CHROMIUM, SECRET, attacker_site, run_in_browser, served, write_run

from rlvr_gym.serve.app import create_app as create_server
from rlvr_gym.serve.app import server_policy
from rlvr_gym.viewer.app import create_app as create_viewer
from rlvr_gym.viewer.app import viewer_policy

ENV = "rlvr/MathArithmetic-v0"
TOKEN = "browser-attack-token"


@pytest.fixture(scope="module")
def chromium():
    if not os.path.exists(CHROMIUM):  # scripts/test.sh installs it and sets RLVR_REQUIRE_BROWSER=1: no silent skip
        missing = f"Debian chromium missing at {CHROMIUM}: run scripts/setup_browser.sh"
        pytest.fail(missing) if os.environ.get("RLVR_REQUIRE_BROWSER") else pytest.skip(missing)
    sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=BROWSER_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="module")
def serve_live():
    """The env server as the CLI runs it (with a token): (port, request log, session pool)."""
    app = create_server(ENV, policy=server_policy(TOKEN))
    with served(app) as (port, recorder):
        yield port, recorder, app.state.pool


@pytest.fixture(scope="module")
def view_live(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("RLVR_GYM_CACHE", str(tmp_path_factory.mktemp("cache")))
    with served(create_viewer([write_run(tmp_path_factory.mktemp("run"))], policy=viewer_policy(TOKEN))) as live:
        yield live
    mp.undo()


def rebinding_read(browser, port: int, path: str) -> str:
    """Serve an attacker's page as http://rebind.test:PORT (which resolves to 127.0.0.1), then let it read `path`
    as a same-origin request: what a DNS-rebinding page does. Returns the text it read."""
    page = f"""<script>window.results = {{}};
    fetch("{path}").then(r => r.text()).then(t => window.results.text = t)
        .catch(() => window.results.text = "blocked").finally(() => window.done = true);
    </script>"""
    context = browser.new_context()
    try:
        tab = context.new_page()
        tab.route(f"http://rebind.test:{port}/attack", lambda route: route.fulfill(body=page, content_type="text/html"))
        tab.goto(f"http://rebind.test:{port}/attack")
        tab.wait_for_function("window.done === true", timeout=15000)
        return tab.evaluate("window.results.text")
    finally:
        context.close()


def test_a_cross_origin_page_cannot_drive_the_server_even_knowing_the_token(chromium, serve_live):
    port, recorder, pool = serve_live
    target = f"http://127.0.0.1:{port}"
    page = f"""<script>
    window.results = {{}};
    const post = (name, type) => fetch("{target}/reset?token={TOKEN}&attack=" + name, {{method: "POST",
        mode: "no-cors", headers: {{"Content-Type": type}}, body: '{{"task_index": 0}}'}}).then(
        r => window.results[name] = r.type, e => window.results[name] = "blocked");
    const socket = (name, query) => new Promise(done => {{
        const ws = new WebSocket("ws://127.0.0.1:{port}/ws?attack=" + name + query);
        ws.onopen = () => {{ ws.send('{{"type": "reset", "data": {{}}}}'); }};
        ws.onmessage = e => {{ window.results[name] = e.data; done(); }};
        ws.onerror = () => {{ window.results[name] = "refused"; done(); }};
    }});
    Promise.all([post("plain", "text/plain"), post("form", "application/x-www-form-urlencoded"),
                 socket("ws_token", "&token={TOKEN}"), socket("ws_bare", "")]).then(() => window.done = true);
    </script>"""
    before = len(recorder.log)
    with attacker_site(page) as url:
        results = run_in_browser(chromium, url)
    attempts = [e for e in recorder.log[before:] if "attack=" in e["query"]]
    assert {e["query"].split("attack=")[1].split("&")[0] for e in attempts} == {"plain", "form", "ws_token", "ws_bare"}
    assert all(e["status"] == 403 for e in attempts), attempts  # refused by Origin, before any app code
    assert results["ws_token"] == results["ws_bare"] == "refused"
    assert not pool.sessions


def test_a_dns_rebinding_page_reads_nothing_from_the_env_server(chromium, serve_live):
    port, recorder, _ = serve_live
    text = rebinding_read(chromium, port, f"/metadata?token={TOKEN}")  # even knowing the token
    assert ENV not in text and "HOST_NOT_ALLOWED" in text
    assert recorder.log[-1]["path"] == "/metadata" and recorder.log[-1]["status"] == 403


def test_the_user_gets_in_with_the_printed_url_and_other_sites_do_not(chromium, view_live):
    port, recorder = view_live
    base = f"http://127.0.0.1:{port}"
    context = chromium.new_context()
    try:
        tab = context.new_page()
        assert tab.goto(f"{base}/?token={TOKEN}").status == 200  # the URL the CLI prints
        tab.click("text=episodes.jsonl")  # later pages ride on the port's cookie
        assert tab.url.endswith("/run/0") and "1 matching episodes" in tab.content()
        attack = f"""<iframe id="frame" src="{base}/run/0/episode/0?attack=frame"></iframe><script>
        window.results = {{}};
        fetch("{base}/run/0/episode/0?attack=fetch", {{mode: "no-cors", credentials: "include"}})
            .then(r => window.results.fetch = r.type, () => window.results.fetch = "blocked")
            .finally(() => setTimeout(() => window.done = true, 500));
        </script>"""
        before = len(recorder.log)
        with attacker_site(attack) as url:
            tab.goto(url)  # same browser, same cookie jar: the user visits a hostile page on another port
            tab.wait_for_function("window.done === true", timeout=15000)
    finally:
        context.close()
    attempts = [e for e in recorder.log[before:] if "attack=" in e["query"]]
    assert {e["query"] for e in attempts} == {"attack=frame", "attack=fetch"}
    assert all(e["status"] == 401 for e in attempts), attempts  # the cookie is not honoured for another site


def test_a_dns_rebinding_page_reads_no_run_from_the_viewer(chromium, view_live):
    port, recorder = view_live
    text = rebinding_read(chromium, port, f"/run/0/episode/0?token={TOKEN}")
    assert SECRET not in text and "HOST_NOT_ALLOWED" in text
    assert recorder.log[-1]["path"] == "/run/0/episode/0" and recorder.log[-1]["status"] == 403
