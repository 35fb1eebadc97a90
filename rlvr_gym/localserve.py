"""The one bind policy for every server we start (env server, viewer, shop site, MCP over HTTP).

Loopback by default; any other address needs `--allow-remote` and then always a token (generated when not
given), so a page or env is never exposed to the network by accident.
"""

from __future__ import annotations

import argparse
import secrets
import sys

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def add_bind_arguments(parser: argparse.ArgumentParser, port: int) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="bind address (default: loopback only)")
    parser.add_argument("--port", type=int, default=port)
    parser.add_argument("--allow-remote", action="store_true", help="permit a non-loopback --host (needs a token)")
    parser.add_argument("--token", help="access token (required beyond loopback; generated when omitted)")


def resolve_token(args: argparse.Namespace, prog: str) -> tuple[bool, str | None]:
    """(allowed, token): refuses a non-loopback bind without --allow-remote; remote binds always get a token."""
    if args.host in LOOPBACK:
        return True, args.token
    if not args.allow_remote:
        print(f"{prog}: binding {args.host} needs --allow-remote (and then a token)", file=sys.stderr)
        return False, None
    return True, args.token or secrets.token_urlsafe(24)
