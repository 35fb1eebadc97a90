"""GRPO, DAPO and NudgeRL on the same tasks and eval at equal generated-token budgets, at 1x/2x/... rollouts per
problem and over several seeds: one run per (arm, scale, seed), a pass-rate-vs-tokens plot and a summary.

`rlvr-gym nudge-compare configs/nudge-vs-grpo.yaml [--arms grpo,dapo,nudge] [--scales 1,2,4] [--seeds 0,1,2]
[--budget TOKENS] [--out DIR] [--set k=v]`

The config is the NudgeRL arm; the others are that config plus overrides (`arm_overrides`): `grpo` swaps the trainer
and estimator and keeps everything else (model, tasks, N rollouts per problem, loss, eval); `dapo` is `grpo` with
the `dapo` estimator (dynamic sampling, overlong shaping with a quarter of the generation budget as buffer, as in
the DAPO paper's 4k of 20k) and DAPO's loss (clip-higher 0.28, token-level). A scale s multiplies the rollouts per
problem (NudgeRL: K, the rollouts per context). Every run stops once it has generated `max_gen_tokens` for training
(refills included), so arms and scales are compared at equal sampling cost, not equal steps. The summary pairs each
arm with GRPO at the same scale and seed and says whether the final held-out difference is within two binomial
standard errors over the eval tasks.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from rlvr_gym.algorithms.metrics import read_metrics
from rlvr_gym.algorithms.train_config import TrainConfig, load_config
from rlvr_gym.algorithms.trainer import trainer_class

ARMS = ("grpo", "dapo", "nudge")
METRICS = ("eval/pass_rate", "eval/pass_rate_low", "eval/pass_rate_high", "eval/pass@1", "eval/pass@k")
GRPO = ["algorithm={name: policy_gradient}", "estimator=grpo", "estimator_params={}"]


def arm_overrides(base: TrainConfig, arm: str, scale: int) -> list[str]:
    """The overrides that turn the NudgeRL base config into `arm` with `scale` x its rollouts per problem."""
    if arm == "nudge":
        k = base.algorithm.options().get("rollouts_per_context", 4) * scale
        return [f"algorithm.rollouts_per_context={k}", f"rollout.group_size={base.rollout.group_size * scale}"]
    grpo = [*GRPO, f"rollout.group_size={base.rollout.group_size * scale}"]
    if arm == "grpo":
        return grpo
    if arm == "dapo":
        buffer = max(1, (base.rollout.sampling.max_new_tokens or 0) // 4)
        return [
            *grpo,
            "estimator=dapo",
            f"estimator_params={{overlong_buffer: {buffer}}}",
            "loss.clip_high=0.28",
            "loss.aggregation=token_mean",
        ]
    raise ValueError(f"unknown arm {arm!r}: {', '.join(ARMS)}")


def run_name(arm: str, scale: int, seed: int) -> str:
    return f"{arm}-x{scale}-seed{seed}"


def arm_config(base: TrainConfig, arm: str, scale: int, seed: int, out: Path) -> TrainConfig:
    name = run_name(arm, scale, seed)
    return load_config(base, [*arm_overrides(base, arm, scale), f"seed={seed}", f"run_dir={out / name}"])


def binomial_se(p: float, n: int) -> float:
    return math.sqrt(max(p * (1 - p), 0.0) / max(n, 1))


def run_result(cfg: TrainConfig, wall_s: float) -> dict[str, Any]:
    """What one run reached: first and last eval, the curve against generated tokens, sampling totals."""
    records = read_metrics(cfg.run_dir / "metrics.jsonl")
    evals = [r for r in records if "eval/pass_rate" in r]
    train = [r for r in records if "reward_mean" in r]
    tokens = 0.0
    curve: list[tuple[float, float, float, float]] = []  # tokens, greedy pass rate and its 95% Wilson interval
    for r in records:
        tokens = r.get("gen_tokens_total", tokens)
        if "eval/pass_rate" in r:
            p = r["eval/pass_rate"]
            curve.append((tokens, p, r.get("eval/pass_rate_low", p), r.get("eval/pass_rate_high", p)))
    out: dict[str, Any] = {
        "run_dir": str(cfg.run_dir),
        "estimator": cfg.estimator,
        "rollouts_per_problem": cfg.rollout.group_size,
        "steps": len(train),
        "gen_tokens": tokens,
        "wall_s": round(wall_s, 1),
        "initial": {k: evals[0].get(k) for k in METRICS if k in evals[0]} if evals else {},
        "final": {k: evals[-1].get(k) for k in METRICS if k in evals[-1]} if evals else {},
        "curve": curve,
    }
    for key in ("sampling/drawn", "sampling/kept", "sampling/tries"):
        if any(key in r for r in train):
            out[key.replace("sampling/", "mean_")] = float(np.mean([r[key] for r in train if key in r]))
    return out


def summarise(runs: dict[str, dict[str, Any]], num_tasks: int) -> dict[str, Any]:
    """Per arm and scale: final greedy pass rates over seeds; per run: the difference to GRPO at the same scale and
    seed, with a two-standard-error noise check over the eval tasks."""
    table: dict[str, dict[str, Any]] = {}
    differences: dict[str, dict[str, Any]] = {}
    for name, run in runs.items():
        arm, scale, seed = name.split("-")
        final = run["final"].get("eval/pass_rate")
        row = table.setdefault(f"{arm}-{scale}", {"finals": [], "seeds": []})
        row["finals"].append(final)
        row["seeds"].append(seed)
        other = runs.get(f"grpo-{scale}-{seed}")
        if arm == "grpo" or other is None or final is None or other["final"].get("eval/pass_rate") is None:
            continue
        base = other["final"]["eval/pass_rate"]
        two_se = 2 * math.hypot(binomial_se(final, num_tasks), binomial_se(base, num_tasks))
        differences[f"{name} - grpo"] = {
            "difference": final - base,
            "two_se": two_se,
            "within_noise": abs(final - base) <= two_se,
        }
    for row in table.values():
        finals = [f for f in row["finals"] if f is not None]
        row["mean"] = float(np.mean(finals)) if finals else None
    return {"eval_tasks": num_tasks, "table": table, "differences": differences}


def plot(runs: dict[str, dict[str, Any]], path: Path) -> None:
    """Held-out greedy pass rate (95% Wilson bars) against training tokens generated, one panel per scale, one line
    per run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scales = sorted({name.split("-")[1] for name in runs})
    colours = {arm: f"C{i}" for i, arm in enumerate(ARMS)}
    fig, axes = plt.subplots(1, len(scales), figsize=(5 * len(scales), 3.6), squeeze=False)
    for ax, scale in zip(axes.flat, scales, strict=True):
        for name, run in runs.items():
            arm, run_scale, seed = name.split("-")
            if run_scale != scale or not run["curve"]:
                continue
            xs, ys, lows, highs = (np.array(v) for v in zip(*run["curve"], strict=True))
            colour = colours.get(arm, "k")
            ax.errorbar(
                xs,
                ys,
                yerr=[ys - lows, highs - ys],
                marker="o",
                markersize=3,
                capsize=2,
                color=colour,
                label=f"{arm} {seed}",
            )
        ax.set_title(f"held-out greedy pass rate, {scale} rollouts/problem")
        ax.set_xlabel("training tokens generated")
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def compare(
    config: str | Path | dict[str, Any],
    out: str | Path,
    *,
    arms: list[str] | None = None,
    scales: list[int] | None = None,
    seeds: list[int] | None = None,
    overrides: list[str] | None = None,
    resume: bool = True,
    model_loader: Callable[[], tuple[Any, Any]] | None = None,
) -> dict[str, Any]:
    """Train every (arm, scale, seed) in turn (same process, a fresh model each), then write `compare.png` and
    `summary.json` (rewritten after each run, so a long comparison can be read while it runs).

    `model_loader` returns a fresh (model, tokenizer) per run (tests, in-memory models); default: the config's.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    base = load_config(config, overrides)
    if base.max_gen_tokens is None:
        raise ValueError("the comparison needs max_gen_tokens: every run gets the same generated-token budget")
    runs: dict[str, dict[str, Any]] = {}
    summary: dict[str, Any] = {}
    for scale in scales or [1]:
        for seed in seeds if seeds is not None else [base.seed]:
            for arm in arms or list(ARMS):
                cfg = arm_config(base, arm, scale, seed, out)
                t0 = time.perf_counter()
                model, tokenizer = model_loader() if model_loader is not None else (None, None)
                trainer_class(cfg.algorithm.name)(cfg, model=model, tokenizer=tokenizer).run(resume=resume)
                runs[run_name(arm, scale, seed)] = run_result(cfg, time.perf_counter() - t0)
                summary = {
                    "config": str(config) if not isinstance(config, dict) else "<dict>",
                    "budget_gen_tokens": base.max_gen_tokens,
                    "runs": runs,
                    **summarise(runs, base.eval.num_tasks),
                }
                (out / "summary.json").write_text(json.dumps(summary, indent=1))
    plot(runs, out / "compare.png")
    return summary


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="rlvr-gym nudge-compare", description="GRPO, DAPO and NudgeRL at equal generated-token budgets."
    )
    parser.add_argument("config", help="a NudgeRL train config with max_gen_tokens (see configs/nudge-vs-grpo.yaml)")
    parser.add_argument("--out", default="runs/nudge-vs-grpo", help="one run dir per run, plot and summary here")
    parser.add_argument("--arms", default=",".join(ARMS), help="comma-separated: " + ", ".join(ARMS))
    parser.add_argument("--scales", default="1", help="rollouts-per-problem multipliers, e.g. 1,2,4")
    parser.add_argument("--seeds", help="comma-separated seeds (default: the config's)")
    parser.add_argument("--budget", type=int, help="shortcut for --set max_gen_tokens=N")
    parser.add_argument("--steps", type=int, help="shortcut for --set steps=N (the budget may end a run first)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--fresh", action="store_true", help="ignore existing checkpoints")
    ns = parser.parse_args(argv)
    overrides = list(ns.overrides)
    overrides += [f"max_gen_tokens={ns.budget}"] if ns.budget is not None else []
    overrides += [f"steps={ns.steps}"] if ns.steps is not None else []
    summary = compare(
        ns.config,
        ns.out,
        arms=ns.arms.split(","),
        scales=_ints(ns.scales),
        seeds=_ints(ns.seeds) if ns.seeds else None,
        overrides=overrides,
        resume=not ns.fresh,
    )
    print(json.dumps({k: v for k, v in summary.items() if k != "runs"}, indent=1))
    for name, run in summary["runs"].items():
        print(name, json.dumps({k: run[k] for k in ("initial", "final", "steps", "gen_tokens", "wall_s")}))
    print(f"plot: {Path(ns.out) / 'compare.png'}  summary: {Path(ns.out) / 'summary.json'}")
    return 0
