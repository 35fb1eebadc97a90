"""Start a real OpenAI-compatible server (llama.cpp's C++ server, from its own virtualenv) on 127.0.0.1.

Used by the integration tests and the throughput benchmark, and handy for trying the `openai` agent offline:

    python -m rlvr_gym.agents.local_server          # serves smollm2 until Ctrl-C, prints the base URL

The server is llama.cpp's `tools/server` as shipped prebuilt in the `xllamacpp` wheel, run by `serve_gguf.py` in a
separate virtualenv built by `scripts/setup_server.sh` (seconds; its pins never touch the project's environment).
Its python is `$RLVR_GYM_SERVER_PYTHON`, else `<cache>/server-venv/bin/python`.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType

import httpx

from .hf import default_num_threads
from .models import cache_dir, smollm2_gguf_path

SETUP_HINT = "build it with scripts/setup_server.sh (the prebuilt xllamacpp wheel in its own venv, ~10 s)"
SERVE_SCRIPT = Path(__file__).with_name("serve_gguf.py")


def server_python() -> Path:
    """The server venv's python; raises FileNotFoundError (with the setup command) when it is not built."""
    explicit = os.environ.get("RLVR_GYM_SERVER_PYTHON")
    path = Path(explicit) if explicit else cache_dir() / "server-venv" / "bin" / "python"
    if not path.exists():
        raise FileNotFoundError(f"no OpenAI-compatible server at {path}: {SETUP_HINT}")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LlamaCppServer:
    """`with LlamaCppServer() as server: server.base_url` -- a llama.cpp server process bound to 127.0.0.1.

    `parallel` requests are decoded together (continuous batching), each with `n_ctx` tokens of context.
    """

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        alias: str = "smollm2",
        port: int | None = None,
        n_ctx: int = 2048,
        parallel: int = 4,
        n_threads: int | None = None,
        python: str | Path | None = None,
        startup_timeout_s: float = 120.0,
        log_path: str | Path | None = None,
    ) -> None:
        self.model = Path(model) if model is not None else smollm2_gguf_path()
        self.alias = alias
        self.port = port or free_port()
        self.n_ctx = n_ctx
        self.parallel = parallel
        self.n_threads = n_threads or default_num_threads()  # the same spin-wait trap as torch's OpenMP
        self.python = Path(python) if python is not None else server_python()
        self.startup_timeout_s = startup_timeout_s
        self.log_path = Path(log_path) if log_path is not None else None
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def argv(self) -> list[str]:
        return [
            str(self.python),
            str(SERVE_SCRIPT),
            "--model",
            str(self.model),
            "--alias",
            self.alias,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n-ctx",
            str(self.n_ctx),
            "--parallel",
            str(self.parallel),
            "--threads",
            str(self.n_threads),
        ]

    def start(self) -> LlamaCppServer:
        argv = self.argv()
        log = open(self.log_path, "wb") if self.log_path else subprocess.DEVNULL  # noqa: SIM115 - owned by Popen
        self.process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited with {self.process.returncode} during start-up: {argv}")
            try:
                if httpx.get(f"{self.base_url}/models", timeout=2.0).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
        self.stop()
        raise TimeoutError(f"server not ready after {self.startup_timeout_s}s: {argv}")

    def stop(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.process = None

    def __enter__(self) -> LlamaCppServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def main() -> int:
    with LlamaCppServer(port=int(sys.argv[1]) if len(sys.argv) > 1 else 8000) as server:
        print(f"serving smollm2 at {server.base_url} (agent spec: openai:smollm2@{server.base_url})", flush=True)
        try:
            assert server.process is not None
            server.process.wait()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
