"""Serve rlvr-gym over MCP: any registered env as `reset`/`step`/`state` tools, or the tools family's typed tools.

`rlvr-gym mcp ENV_ID` (env mode) or `rlvr-gym mcp tools` (the ToolDepth toolset), over stdio or streamable HTTP.
Over HTTP every request passes the shared guard (launch token in the printed URL, Host/Origin checks, JSON only,
bounded bodies and sessions: `http.py`). Needs the `mcp` extra (the official MCP Python SDK).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

TOOLSET_MODE = "tools"
TOOLSET_ENV = "rlvr/ToolDepth-v0"  # whose toolset `rlvr-gym mcp tools` serves (`tools:ENV_ID` picks another env)


def build_server(
    target: str, env_kwargs: dict[str, Any] | None = None, *, host: str = "127.0.0.1", port: int = 8000
) -> Any:
    """`target` is an env id, or "tools" / "tools:ENV_ID" for the typed toolset that env executes calls on."""
    mode, _, env_id = target.partition(":")
    if mode == TOOLSET_MODE:
        from .toolset_server import build_toolset_server, env_toolset

        return build_toolset_server(env_toolset(env_id or TOOLSET_ENV, env_kwargs), host=host, port=port)
    from .env_server import build_env_server

    return build_env_server(target, env_kwargs, host=host, port=port)


def main(argv: Sequence[str] | None = None) -> int:
    from ..http_guard import add_server_arguments, launch_policy, run_server
    from ..serve import parse_value

    parser = argparse.ArgumentParser(prog="rlvr-gym mcp", description=__doc__.splitlines()[0])
    parser.add_argument(
        "env", help=f"registered env id (e.g. rlvr/Math-v0), or {TOOLSET_MODE!r} / {TOOLSET_MODE}:ENV_ID for a toolset"
    )
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    add_server_arguments(parser, port=8000)
    parser.add_argument("--env-arg", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    policy = None
    if args.transport == "http":
        from .http import mcp_policy

        policy = launch_policy(args, "mcp", mcp_policy())
        if policy is None:
            return 2
    kwargs = {k: parse_value(v) for k, _, v in (item.partition("=") for item in args.env_arg)}
    try:
        server = build_server(args.env, kwargs, host=args.host, port=args.port)
    except (KeyError, TypeError, ValueError) as exc:
        print(f"mcp: {exc}", file=sys.stderr)
        return 2
    if policy is not None:
        from .http import http_app

        return run_server(
            http_app(server, policy), args, policy, f"MCP server for {args.env}", path="/mcp", out=sys.stderr
        )
    try:
        server.run("stdio")
    except KeyboardInterrupt:
        return 130
    return 0
