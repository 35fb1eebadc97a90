"""Serve any registered env over HTTP/WebSocket (OpenEnv-compatible) and drive served envs from the runner.

`rlvr-gym serve ENV_ID` starts the server (`app.py`); `rlvr/Remote-v0` (`client.RemoteEnv`) is the env on the
other side. Needs the `serve` extra (FastAPI, uvicorn, websockets).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from ..http_guard import TOKEN_ENV, add_server_arguments, launch_policy, run_server


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
    add_server_arguments(parser, port=8000)
    from .sessions import SessionLimits

    defaults = SessionLimits()
    parser.add_argument("--max-sessions", type=int, default=defaults.max_sessions)
    parser.add_argument("--max-sessions-per-client", type=int, default=defaults.per_client,
                        help="sessions one peer address may hold (all local processes are one peer)")
    parser.add_argument("--idle-s", type=float, default=defaults.idle_s, help="close sessions idle this long")
    parser.add_argument("--reset-rate", type=float, default=defaults.reset_rate, help="resets/s per client")
    parser.add_argument("--env-arg", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    from .app import create_app, server_policy

    policy = launch_policy(args, "serve", server_policy())
    if policy is None:
        return 2
    kwargs = {k: parse_value(v) for k, _, v in (item.partition("=") for item in args.env_arg)}
    limits = SessionLimits(max_sessions=args.max_sessions, per_client=args.max_sessions_per_client,
                           idle_s=args.idle_s, reset_rate=args.reset_rate)
    try:
        app = create_app(args.env, kwargs, limits=limits, policy=policy)
    except (KeyError, TypeError, ValueError) as exc:
        print(f"serve: {exc}", file=sys.stderr)
        return 2
    host = f"[{args.host}]" if ":" in args.host else args.host
    return run_server(app, args, policy, f"serving {args.env}", notes=[
        "OpenEnv's protocol: WebSocket /ws, MCP at /mcp, HTTP /reset /step /state; every route but /health needs "
        "the token:",
        f"  {TOKEN_ENV}={policy.token} for rlvr/Remote-v0, or the header Authorization: Bearer <token>,",
        f"  or in the URL for clients that take only one (OpenEnv's, openenv validate --url): "
        f"http://rlvr:<token>@{host}:{args.port}"])
