"""NudgeRL vs GRPO on the same tasks, seeds and rollout budget: one run per arm, a pass@1 / pass@k plot, a summary.

`rlvr-gym nudge-compare configs/nudge-vs-grpo.yaml [--arms nudge,grpo] [--steps N] [--out DIR] [--set k=v]`

The config is a NudgeRL train config. Every arm is that config plus a few overrides (`ARMS`): `grpo` swaps the
trainer and estimator and keeps everything else (model, seed, tasks, N rollouts per problem, eval), `grpo-2x`
doubles GRPO's rollouts per problem. Eval must set `pass_at_k` so both arms report pass@1 / pass@k on the same
held-out tasks. The summary says whether the final difference is within two standard errors (binomial, over the
eval tasks) - at CPU sizes it usually is.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rlvr_gym.algorithms.metrics import read_metrics
from rlvr_gym.algorithms.report import series
from rlvr_gym.algorithms.train_config import TrainConfig, load_config
from rlvr_gym.algorithms.trainer import trainer_class

GRPO = ["algorithm={name: policy_gradient}", "estimator=grpo", "estimator_params={}"]
ARMS: dict[str, list[str]] = {"nudge": [], "grpo": GRPO}
METRICS = ("eval/pass@1", "eval/pass@k", "eval/pass_rate")


def arm_config(base: TrainConfig, arm: str, out: Path, overrides: list[str]) -> TrainConfig:
    if arm == "grpo-2x":
        extra = [*GRPO, f"rollout.group_size={2 * base.rollout.group_size}"]
    elif arm in ARMS:
        extra = ARMS[arm]
    else:
        raise ValueError(f"unknown arm {arm!r}: {', '.join([*ARMS, 'grpo-2x'])}")
    return load_config(base, [*overrides, *extra, f"run_dir={out / arm}"])


def binomial_se(p: float, n: int) -> float:
    return math.sqrt(max(p * (1 - p), 0.0) / max(n, 1))


def summarise(arms: dict[str, dict[str, Any]], num_tasks: int) -> dict[str, Any]:
    """Final values per arm and, against the first arm, differences with a two-standard-error noise check."""
    names = list(arms)
    out: dict[str, Any] = {"eval_tasks": num_tasks, "arms": arms, "differences": {}}
    for other in names[1:]:
        for key in METRICS:
            a, b = arms[names[0]]["final"].get(key), arms[other]["final"].get(key)
            if a is None or b is None:
                continue
            se = math.hypot(binomial_se(a, num_tasks), binomial_se(b, num_tasks))
            out["differences"][f"{names[0]}-{other}:{key}"] = {
                "difference": a - b,
                "two_se": 2 * se,
                "within_noise": abs(a - b) <= 2 * se,
            }
    return out


def plot(curves: dict[str, list[dict[str, Any]]], path: Path, k: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    titles = {"eval/pass@1": "pass@1 (sampled)", "eval/pass@k": f"pass@{k} (sampled)", "eval/pass_rate": "greedy"}
    fig, axes = plt.subplots(1, len(METRICS), figsize=(5 * len(METRICS), 3.6), squeeze=False)
    for ax, key in zip(axes.flat, METRICS, strict=True):
        for arm, records in curves.items():
            xs, ys = series(records, key)
            ax.plot(xs, ys, marker="o", markersize=3, label=arm)
        ax.set_title(f"held-out {titles[key]}")
        ax.set_xlabel("step")
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def compare(
    config: str | Path | dict[str, Any],
    out: str | Path,
    *,
    arms: list[str] | None = None,
    overrides: list[str] | None = None,
    resume: bool = True,
    model_loader: Callable[[], tuple[Any, Any]] | None = None,
) -> dict[str, Any]:
    """Train every arm in turn (same process, a fresh model each), then write `compare.png` and `summary.json`.

    `model_loader` returns a fresh (model, tokenizer) per arm (tests, in-memory models); default: the config's.
    """
    out = Path(out)
    base = load_config(config, overrides)
    if base.eval.pass_at_k < 1:
        raise ValueError("the comparison needs eval.pass_at_k >= 1")
    results: dict[str, dict[str, Any]] = {}
    curves: dict[str, list[dict[str, Any]]] = {}
    for arm in arms or list(ARMS):
        cfg = arm_config(base, arm, out, [])
        t0 = time.perf_counter()
        model, tokenizer = model_loader() if model_loader is not None else (None, None)
        trainer_class(cfg.algorithm.name)(cfg, model=model, tokenizer=tokenizer).run(resume=resume)
        records = [r for r in read_metrics(cfg.run_dir / "metrics.jsonl") if any(k in r for k in METRICS)]
        curves[arm] = records
        results[arm] = {
            "run_dir": str(cfg.run_dir),
            "algorithm": cfg.algorithm.name,
            "estimator": cfg.estimator,
            "rollouts_per_problem": cfg.rollout.group_size,
            "wall_s": round(time.perf_counter() - t0, 1),
            "initial": {k: records[0].get(k) for k in METRICS} if records else {},
            "final": {k: records[-1].get(k) for k in METRICS} if records else {},
            "curve": {k: dict(zip(*series(records, k), strict=True)) for k in METRICS},
        }
    summary = {
        "config": str(config) if not isinstance(config, dict) else "<dict>",
        "steps": base.steps,
        "seed": base.seed,
        "k": base.eval.pass_at_k,
        **summarise(results, base.eval.num_tasks),
    }
    out.mkdir(parents=True, exist_ok=True)
    plot(curves, out / "compare.png", base.eval.pass_at_k)
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    return summary


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="rlvr-gym nudge-compare", description="NudgeRL vs GRPO, same budget.")
    parser.add_argument("config", help="a NudgeRL train config (see configs/nudge-vs-grpo.yaml)")
    parser.add_argument("--out", default="runs/nudge-vs-grpo", help="one run dir per arm, plot and summary here")
    parser.add_argument("--arms", default="nudge,grpo", help="comma-separated: nudge, grpo, grpo-2x")
    parser.add_argument("--steps", type=int, help="shortcut for --set steps=N")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--fresh", action="store_true", help="ignore existing checkpoints")
    ns = parser.parse_args(argv)
    overrides = [*ns.overrides, *([f"steps={ns.steps}"] if ns.steps is not None else [])]
    summary = compare(ns.config, ns.out, arms=ns.arms.split(","), overrides=overrides, resume=not ns.fresh)
    print(json.dumps({k: v for k, v in summary.items() if k != "arms"}, indent=1))
    for arm, result in summary["arms"].items():
        print(arm, json.dumps({"initial": result["initial"], "final": result["final"], "wall_s": result["wall_s"]}))
    print(f"plot: {Path(ns.out) / 'compare.png'}  summary: {Path(ns.out) / 'summary.json'}")
    return 0
