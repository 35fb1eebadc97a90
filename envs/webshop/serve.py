"""`rlvr-gym serve-webshop`: run the shop web site (uvicorn). Loopback by default; a remote bind needs
`--allow-remote` and then always a token (given, or generated and printed once)."""

from __future__ import annotations

import argparse
import ipaddress
import secrets
import sys
from collections.abc import Sequence


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="rlvr-gym serve-webshop", description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=3000)
    p.add_argument("--allow-remote", action="store_true", help="permit a non-loopback --host (requires a token)")
    p.add_argument("--token", help="require this token (Authorization: Bearer, cookie, or ?token= once)")
    p.add_argument("--split", default="train", choices=("train", "eval"))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--catalog-size", type=int, default=1000)
    p.add_argument("--catalog-seed", type=int, default=0)
    p.add_argument("--data", help="WebShop items_shuffle*.json (or set WEBSHOP_DATA)")
    p.add_argument("--engine", default="tantivy", choices=("tantivy", "bm25s"))
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(list(sys.argv[1:] if argv is None else argv))
    token = args.token
    if not is_loopback(args.host):
        if not args.allow_remote:
            print(
                f"serve-webshop: refusing to bind {args.host}; pass --allow-remote (a token is then required)",
                file=sys.stderr,
            )
            return 2
        if not token:
            token = secrets.token_urlsafe(24)
            print(f"serve-webshop: token {token}", file=sys.stderr)
    import uvicorn

    from .site import create_app

    app = create_app(
        token=token,
        split=args.split,
        seed=args.seed,
        catalog_size=args.catalog_size,
        catalog_seed=args.catalog_seed,
        data=args.data,
        engine=args.engine,
    )
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0
