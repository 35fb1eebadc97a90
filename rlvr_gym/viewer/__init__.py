"""`rlvr-gym view RUN [RUN ...]`: a local, read-only web page for looking at runs instead of reading JSONL.

Runs are episodes JSONL files (or folders holding `episodes.jsonl`) as `rlvr-gym eval` and the trainer write
them. Needs the `viewer` extra (FastAPI, uvicorn, Jinja2).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..localserve import add_bind_arguments, resolve_token


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rlvr-gym view", description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", help="episodes JSONL files or run folders")
    add_bind_arguments(parser, port=8765)
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    allowed, token = resolve_token(args, "view")
    if not allowed:
        return 2
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
