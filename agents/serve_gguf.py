"""Serve a GGUF model over llama.cpp's own C++ HTTP server (OpenAI-compatible), through the `xllamacpp` wheel.

This file runs inside the server virtualenv built by `scripts/setup_server.sh`, not in the project's environment:
it imports only the standard library and `xllamacpp`. `local_server.LlamaCppServer` starts it as a script.
The wheel ships llama.cpp prebuilt (no compiler, seconds to install); `xllamacpp.Server` loads the model and
listens in background threads, so this process only waits for SIGTERM/SIGINT or for its parent to go away (an
orphaned server on a shared machine would hold cores and a port for nothing).
"""

from __future__ import annotations

import argparse
import os
import signal
import threading


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="path of the GGUF file")
    parser.add_argument("--alias", default="smollm2", help="model name clients send")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--n-ctx", type=int, default=2048, help="context length of each parallel slot")
    parser.add_argument("--parallel", type=int, default=4, help="requests decoded together (continuous batching)")
    parser.add_argument("--threads", type=int, default=2)
    return parser.parse_args(argv)


def serve(args: argparse.Namespace) -> None:
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.model_alias = {args.alias}
    params.hostnames = [args.host]
    params.port = args.port
    params.n_parallel = args.parallel
    params.n_ctx = args.n_ctx * args.parallel  # llama.cpp splits the total context across the slots
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    parent = os.getppid()
    server = xllamacpp.Server(params)  # returns once the model is loaded and the port is listening
    print(f"listening on {server.listening_address}", flush=True)
    while not stop.wait(1.0):
        if os.getppid() != parent:
            break
    del server  # stops the HTTP and inference threads


if __name__ == "__main__":
    serve(parse_args())
