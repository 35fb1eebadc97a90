"""WebShop reference policies side by side: oracle, random, WebShop's rule baseline and a keyword heuristic.

Prints, per policy, the success rate, the env's mean reward and WebShop's own mean score of the purchase (the
paper's "score" / 100), each with a 95% interval (Wilson for rates, normal approximation for means), as JSON and
as a markdown table. The original's figures for comparison (WebShop paper, Table 2, test split): rule baseline
score 45.6, success 9.6%.

    .venv/bin/python benchmarks/webshop_baselines.py --tasks 500 --split eval
"""

from __future__ import annotations

import argparse
import json
import math
import time

from rlvr_gym import make
from rlvr_gym.envs.webshop.baselines import mean_ci, run_policies


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--split", default="eval", choices=("train", "eval"))
    parser.add_argument("--catalog-size", type=int, default=None, help="default: the env's (10,000)")
    parser.add_argument("--goal-style", default="synthetic", choices=("synthetic", "human"))
    parser.add_argument("--seed", type=int, default=0, help="the random policy's seed")
    args = parser.parse_args()
    kwargs = {"split": args.split, "goal_style": args.goal_style}
    kwargs |= {"catalog_size": args.catalog_size} if args.catalog_size else {}
    start = time.perf_counter()
    env = make("rlvr/WebShop-v0", **kwargs)
    episodes = run_policies(env, args.tasks, args.seed)
    rows = {}
    for name, eps in episodes.items():
        wins = sum(r >= 1.0 - 1e-9 for r, _ in eps)
        rows[name] = {
            "success": wins / len(eps),
            "success_ci": wilson(wins, len(eps)),
            "reward": mean_ci([r for r, _ in eps]),
            "webshop_score": mean_ci([s for _, s in eps]),
        }
    report = {"args": vars(args), "wall_s": round(time.perf_counter() - start, 1), "policies": rows}
    print(json.dumps(report, indent=1))
    print("\n| policy | success [95% CI] | env reward [95% CI] | WebShop score [95% CI] |\n|---|---|---|---|")
    for name, row in rows.items():
        lo, hi = row["success_ci"]
        r, s = row["reward"], row["webshop_score"]
        print(
            f"| {name} | {row['success']:.3f} [{lo:.3f}, {hi:.3f}] | {r[0]:.3f} [{r[1]:.3f}, {r[2]:.3f}] "
            f"| {s[0]:.3f} [{s[1]:.3f}, {s[2]:.3f}] |"
        )


if __name__ == "__main__":
    main()
