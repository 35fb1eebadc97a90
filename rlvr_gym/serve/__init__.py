"""Serve any registered env over HTTP/WebSocket (OpenEnv-compatible) and drive served envs from the runner.

`rlvr-gym serve ENV_ID` starts the server (`app.py`); `rlvr/Remote-v0` (`client.RemoteEnv`) is the env on the
other side. Needs the `serve` extra (FastAPI, uvicorn, websockets).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from ..localserve import add_bind_arguments, resolve_token


def register_envs() -> None:
    from rlvr_gym import register

    register("rlvr/Remote-v0", "rlvr_gym.serve.client:RemoteEnv", family="remote",
             description="an env served by `rlvr-gym serve` elsewhere (env arg base_url=http://host:port)")


def parse_value(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError:
        return text


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rlvr-gym serve", description=__doc__.splitlines()[0])
    parser.add_argument("env", help="registered env id, e.g. rlvr/Math-v0")
    add_bind_arguments(parser, port=8000)
    parser.add_argument("--max-sessions", type=int, default=64)
    parser.add_argument("--idle-s", type=float, default=600.0, help="close sessions idle this long")
    parser.add_argument("--env-arg", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    allowed, token = resolve_token(args, "serve")
    if not allowed:
        return 2
    kwargs = {k: parse_value(v) for k, _, v in (item.partition("=") for item in args.env_arg)}
    import uvicorn

    from .app import create_app

    try:
        app = create_app(args.env, kwargs, max_sessions=args.max_sessions, idle_s=args.idle_s, token=token)
    except (KeyError, TypeError, ValueError) as exc:
        print(f"serve: {exc}", file=sys.stderr)
        return 2
    print(f"serving {args.env} on http://{args.host}:{args.port} (WebSocket /ws)"
          + (f"; token {token}" if token else ""), flush=True)
    try:
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    except KeyboardInterrupt:
        return 130
    return 0
