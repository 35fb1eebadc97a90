"""`rlvr-gym view RUN [RUN ...]`: a local, read-only web page for looking at runs instead of reading JSONL.

Runs are episodes JSONL files (or folders holding `episodes.jsonl`) as `rlvr-gym eval` and the trainer write
them. Needs the `viewer` extra (FastAPI, uvicorn, Jinja2).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..http_guard import add_server_arguments, launch_policy, run_server


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rlvr-gym view", description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", help="episodes JSONL files or run folders")
    add_server_arguments(parser, port=8765)
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    from .app import create_app, viewer_policy

    policy = launch_policy(args, "view", viewer_policy())
    if policy is None:
        return 2
    try:
        app = create_app(args.runs, policy=policy)
    except FileNotFoundError as exc:
        print(f"view: {exc}", file=sys.stderr)
        return 2
    return run_server(app, args, policy, "rlvr-gym viewer")
