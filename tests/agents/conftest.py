"""Shared fixtures: one real SmolLM2 policy per session (the GGUF conversion runs once, then the cache is reused)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def smollm2_dir():
    from rlvr_gym.agents.models import smollm2_path

    return smollm2_path()


@pytest.fixture(scope="session")
def hf_policy(smollm2_dir):
    """float32 without autocast, so logprob and reproducibility checks are tight."""
    from rlvr_gym.agents.hf import HFPolicy

    return HFPolicy.from_pretrained(smollm2_dir, dtype="float32", max_batch_size=8, batch_wait_s=0.05)


# ---- a scriptable fake OpenAI server for fault tests (the real server is in test_agents_server_integration) ------
class FakeOpenAIServer:
    """Serves /v1/chat/completions and /v1/completions on 127.0.0.1, misbehaving as scripted.

    `script` is consumed one entry per request (then "ok"): "ok", "malformed", "drop", "empty",
    ("status", code[, headers]), ("sleep", seconds), "reject_logprobs", ("tool", name, arguments_json).
    """

    def __init__(self, answer: str = "The answer is \\boxed{4}."):
        import http.server
        import threading

        self.answer = answer
        self.script: list = []
        self.requests: list[tuple[str, dict]] = []
        self.inflight = 0
        self.max_inflight = 0
        self.lock = threading.Lock()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                import json
                import time

                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                with server.lock:
                    server.requests.append((self.path, body))
                    action = server.script.pop(0) if server.script else "ok"
                    server.inflight += 1
                    server.max_inflight = max(server.max_inflight, server.inflight)
                try:
                    if isinstance(action, tuple) and action[0] == "sleep":
                        time.sleep(action[1])
                        action = "ok"
                    if action == "drop":
                        self.close_connection = True
                        self.connection.shutdown(2)
                        return
                    if isinstance(action, tuple) and action[0] == "status":
                        self._send(action[1], b'{"error": {"message": "scripted failure"}}',
                                   action[2] if len(action) > 2 else {})
                        return
                    if action == "malformed":
                        self._send(200, b'{"choices": [{"message": ')
                        return
                    if action == "empty":
                        self._send(200, b'{"choices": []}')
                        return
                    if action == "reject_logprobs" and "logprobs" in body:
                        self._send(400, b'{"error": {"message": "logprobs is not supported"}}')
                        return
                    self._send(200, json.dumps(server.response(self.path, body, action)).encode())
                finally:
                    with server.lock:
                        server.inflight -= 1

            def _send(self, code, payload, headers=None):
                self.send_response(code)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def response(self, path, body, action):
        logprobs = [-0.5, -0.25, -0.125]
        usage = {"prompt_tokens": 11, "completion_tokens": 3}
        if path.endswith("/completions") and not path.endswith("/chat/completions"):
            lp = {"token_logprobs": logprobs} if "logprobs" in body else None
            choice = {"text": self.answer, "finish_reason": "stop", "logprobs": lp}
            if body.get("return_token_ids"):
                choice.update(token_ids=[5, 6, 7], prompt_token_ids=body["prompt"])
            return {"choices": [choice], "usage": usage}
        message = {"role": "assistant", "content": self.answer}
        if isinstance(action, tuple) and action[0] == "tool":
            message = {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": action[1], "arguments": action[2]}}]}
        lp = {"content": [{"token": "x", "logprob": v} for v in logprobs]} if body.get("logprobs") else None
        return {"choices": [{"message": message, "finish_reason": "stop", "logprobs": lp}], "usage": usage}

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def fake_server():
    server = FakeOpenAIServer()
    yield server
    server.close()
