"""`rlvr-gym serve-webshop`: run the shop web site (uvicorn). Loopback by default, a launch token always (printed in
the URL, as Jupyter does); a remote bind needs `--allow-remote`. The guard is `rlvr_gym.http_guard`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from rlvr_gym.http_guard import add_server_arguments, launch_policy, run_server

from .catalog import DEFAULT_SIZE
from .search import DEFAULT_ENGINE, ENGINES


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="rlvr-gym serve-webshop", description=__doc__.splitlines()[0])
    add_server_arguments(p, port=3000)
    p.add_argument("--split", default="train", choices=("train", "eval"))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--catalog-size", type=int, default=DEFAULT_SIZE)
    p.add_argument("--catalog-seed", type=int, default=0)
    p.add_argument("--data", help="WebShop items_shuffle*.json (or set WEBSHOP_DATA)")
    p.add_argument("--engine", default=DEFAULT_ENGINE, choices=sorted(ENGINES))
    p.add_argument("--goal-style", default="synthetic", choices=("synthetic", "human"))
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(list(sys.argv[1:] if argv is None else argv))
    from .site import create_app, site_policy

    policy = launch_policy(args, "serve-webshop", site_policy())
    if policy is None:
        return 2
    app = create_app(
        policy,
        split=args.split,
        seed=args.seed,
        catalog_size=args.catalog_size,
        catalog_seed=args.catalog_seed,
        data=args.data,
        engine=args.engine,
        goal_style=args.goal_style,
    )
    return run_server(app, args, policy, "WebShop site")
