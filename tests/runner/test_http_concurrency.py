"""`-c N` means N model requests in flight, measured against a real HTTP server that injects latency (#14.6)."""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from rlvr_gym.cli import main


class LatencyServer:
    """An OpenAI-compatible chat endpoint on 127.0.0.1 that answers "0" after `delay_s` and counts requests in
    flight at once."""

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s
        self.in_flight = 0
        self.peak = 0
        self.requests = 0
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with server.lock:
                    server.in_flight += 1
                    server.requests += 1
                    server.peak = max(server.peak, server.in_flight)
                time.sleep(server.delay_s)
                with server.lock:
                    server.in_flight -= 1
                body = json.dumps(
                    {
                        "choices": [{"message": {"role": "assistant", "content": "0"}, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 5, "completion_tokens": 1},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.mark.parametrize("concurrency", [16, 3])
def test_concurrency_flag_is_requests_in_flight(trap_env_ids, tmp_path, concurrency):
    with LatencyServer(delay_s=0.4) as server:
        out = tmp_path / "e.jsonl"
        code = main(
            [
                "eval",
                trap_env_ids["trap"],
                "--agent",
                f"openai:test-model@{server.url}",
                "-n",
                str(concurrency * 3),
                "-c",
                str(concurrency),
                "-o",
                str(out),
                "--no-progress",
            ]
        )
    assert code == 0
    assert server.requests == concurrency * 3
    assert server.peak == concurrency, f"-c {concurrency} gave {server.peak} requests in flight"
