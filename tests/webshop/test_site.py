"""The web site: same pages and rewards as the text env, 4xx on bad input, token guard, and a real browser."""

import os
import re
import socket
import threading
import time

import pytest
from fastapi.testclient import TestClient

from rlvr_gym.envs.webshop.serve import main
from rlvr_gym.envs.webshop.site import create_app, site_policy
from rlvr_gym.envs.webshop.verifier import verify
from rlvr_gym.http_guard import is_loopback

CHROMIUM = "/usr/bin/chromium"
BROWSER_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
]


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app(), base_url="http://127.0.0.1", follow_redirects=False)


def _start(client, task):
    response = client.get(f"/start?task={task}")
    assert response.status_code == 303
    return response.headers["location"].rsplit("/", 1)[1]


def _act_http(client, sid, action):
    verb, arg = action[: action.index("[")], action[action.index("[") + 1 : -1]
    if verb == "search":
        return client.post(f"/s/{sid}/search", data={"search_query": arg})
    return client.get(f"/s/{sid}/click", params={"target": arg})


def test_html_episode_gives_the_text_env_reward(env, client):
    for index in (0, 5):
        env.reset(options={"task_index": index})
        task = env.task
        for actions in [task.reference_actions, *env.wrong_answers(task, __import__("random").Random(index))[:2]]:
            sid = _start(client, index)
            for action in actions:
                assert _act_http(client, sid, action).status_code == 303
            page = client.get(f"/s/{sid}").text
            expected = verify(task, actions)
            if expected.components["purchased"]:
                shown = float(re.search(r"data-reward='([^']+)'", page).group(1))
                assert shown == expected.reward
            else:
                assert "id='reward'" not in page


def test_json_api_matches_text_env(env, client):
    env.reset(options={"task_index": 7})
    sid = client.post("/api/sessions", json={"task": 7}).json()["session"]
    for action in env.task.reference_actions:
        state = client.post(f"/api/sessions/{sid}/step", json={"action": action}).json()
        assert state["valid"]
    assert state["done"] and state["reward"] == verify(env.task, env.task.reference_actions).reward


def test_bad_requests_are_4xx_never_500(client):
    sid = _start(client, 1)
    probes = [
        client.get("/s/nope"),
        client.get("/s/" + "x" * 5000),
        client.get("/s/nope/click?target=x"),
        client.get(f"/s/{sid}/click?target=%ff%fe"),
        client.get(f"/s/{sid}/click?target=" + "a" * 5000),
        client.get(f"/s/{sid}/click"),
        client.post(f"/s/{sid}/search", data={"search_query": "a\nb"}),
        client.get("/start?task=-1"),
        client.get("/start?task=abc"),
        client.get("/start?task=99999999999999999999"),
        client.post("/api/sessions", content=b"{broken", headers={"content-type": "application/json"}),
        client.post("/api/sessions", content=b"{broken"),
        client.post("/api/sessions", json=[1]),
        client.post("/api/sessions", json={"task": "x"}),
        client.post(f"/api/sessions/{sid}/step", json={"a": 1}),
        client.post(f"/api/sessions/{sid}/step", content=b"\xff\xfe", headers={"content-type": "application/json"}),
        client.get("/api/sessions/zzz"),
    ]
    assert all(400 <= r.status_code < 500 for r in probes), [r.status_code for r in probes]


def test_text_is_escaped(client):
    sid = _start(client, 2)
    client.post(f"/s/{sid}/search", data={"search_query": "<script>alert(1)</script> shampoo"})
    page = client.get(f"/s/{sid}").text
    assert "<script>" not in page


def test_token_guard_and_loopback_default(capsys):
    guarded = TestClient(create_app(site_policy("s3cret")), base_url="http://127.0.0.1", follow_redirects=False)
    assert guarded.get("/").status_code == 401
    assert guarded.get("/", headers={"authorization": "Bearer s3cret"}).status_code == 200
    assert guarded.get("/?token=s3cret").status_code == 200 and guarded.get("/").status_code == 200  # cookie set
    assert is_loopback("127.0.0.1") and is_loopback("::1") and not is_loopback("0.0.0.0")
    assert main(["--host", "0.0.0.0"]) == 2


@pytest.fixture(scope="module")
def live_server():
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    server = uvicorn.Server(uvicorn.Config(create_app(), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.mark.integration
def test_real_browser_buys_with_the_text_env_reward(env, live_server):
    if not os.path.exists(CHROMIUM):  # scripts/test.sh installs it and sets RLVR_REQUIRE_BROWSER=1: no silent skip
        missing = "Debian chromium missing at /usr/bin/chromium: run scripts/setup_browser.sh"
        pytest.fail(missing) if os.environ.get("RLVR_REQUIRE_BROWSER") else pytest.skip(missing)
    from playwright.sync_api import sync_playwright

    env.reset(options={"task_index": 4})
    task = env.task
    wrong = env.wrong_answers(task, __import__("random").Random(4))
    option_miss = next(w for w in wrong if w[-1] == "click[Buy Now]" and w != task.reference_actions)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=BROWSER_ARGS)
        try:
            for actions in (task.reference_actions, option_miss):
                page = browser.new_page()
                page.goto(f"{live_server}/start?task=4")
                for action in actions:
                    verb, arg = action[: action.index("[")], action[action.index("[") + 1 : -1]
                    if verb == "search":
                        page.fill("#search_input", arg)
                        page.click("#search_button")
                    elif page.locator(f"input[type=radio][value='{arg}']").count():
                        with page.expect_navigation():
                            page.check(f"input[type=radio][value='{arg}']")
                    else:
                        page.get_by_role("link", name=arg, exact=True).click()
                    page.wait_for_load_state()
                reward = float(page.locator("#reward pre").get_attribute("data-reward"))
                assert reward == verify(task, actions).reward
                page.close()
        finally:
            browser.close()
