"""`rlvr-gym view RUN [RUN ...]`: a local, read-only web page for looking at runs instead of reading JSONL.

Runs are episodes JSONL files (or folders holding `episodes.jsonl`) as `rlvr-gym eval` and the trainer write
them. Needs the `viewer` extra (FastAPI, uvicorn, Jinja2).
"""

from __future__ import annotations

import argparse
import secrets
import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rlvr-gym view", description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", help="episodes JSONL files or run folders")
    parser.add_argument("--host", default="127.0.0.1", help="bind address (default loopback only)")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--allow-remote", action="store_true", help="permit a non-loopback --host (needs a token)")
    parser.add_argument("--token", help="access token (required with --allow-remote; generated if omitted)")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    loopback = args.host in ("127.0.0.1", "localhost", "::1")
    if not loopback and not args.allow_remote:
        print("view: binding beyond loopback needs --allow-remote (and a token)", file=sys.stderr)
        return 2
    token = args.token or (None if loopback else secrets.token_urlsafe(24))
    import uvicorn

    from .app import create_app

    try:
        app = create_app(args.runs, token=token)
    except FileNotFoundError as exc:
        print(f"view: {exc}", file=sys.stderr)
        return 2
    shown = f"http://{args.host}:{args.port}/" + (f"?token={token}" if token else "")
    print(f"rlvr-gym viewer on {shown} (Ctrl-C to stop)")
    try:
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    except KeyboardInterrupt:
        return 130
    return 0
