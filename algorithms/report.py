"""`report(run_dir)`: PNG learning curves from a run's metrics.jsonl (matplotlib, Agg backend, no display needed)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from .metrics import hack_signature, read_metrics

PANELS: list[tuple[str, list[str]]] = [
    ("reward", ["reward_mean", "eval/reward_mean"]),
    ("pass rate", ["pass_rate", "eval/pass_rate", "eval/pass_rate_low", "eval/pass_rate_high"]),
    ("advantage collapse rate", ["acr"]),
    ("KL to reference", ["kl_ref"]),
    ("entropy", ["entropy"]),
    ("clip fraction", ["clip_frac"]),
    ("grad norm", ["update/grad_norm"]),
    ("response tokens", ["response_tokens", "eval/response_tokens"]),
    ("tokens/s", ["gen_tokens_per_s", "train_tokens_per_s"]),
    ("step time (s)", ["time/step_s", "time/rollout_s", "time/update_s"]),
    ("belief (ReBel-style runs)", ["belief/parse_rate", "belief/split_group_fraction", "belief/reward_mean"]),
]


def series(records: list[dict[str, Any]], key: str) -> tuple[list[int], list[float]]:
    points = [(int(r["step"]), float(r[key])) for r in records if isinstance(r.get(key), (int, float))]
    return [p[0] for p in points], [p[1] for p in points]


def report(run_dir: str | Path, out_dir: str | Path | None = None) -> dict[str, Any]:
    """Write `curves.png` (all panels) and `reward.png`; returns a summary (first/last eval reward, files)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    run = Path(run_dir)
    # last record per step wins: a run that two processes wrote to (a resume while the old one still ran) stays plottable
    records = list({int(r.get("step", 0)): r for r in read_metrics(run / "metrics.jsonl")}.values())
    records.sort(key=lambda r: int(r.get("step", 0)))
    if not records:
        raise FileNotFoundError(f"no metrics in {run / 'metrics.jsonl'}")
    out = Path(out_dir) if out_dir else run / "report"
    out.mkdir(parents=True, exist_ok=True)
    panels = [(title, keys) for title, keys in PANELS if any(series(records, k)[0] for k in keys)]
    cols = 3
    rows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.2 * rows), squeeze=False)
    for ax, (title, keys) in zip(axes.flat, panels, strict=False):
        for key in keys:
            xs, ys = series(records, key)
            if xs:
                ax.plot(xs, ys, marker="o" if key.startswith("eval/") else None, markersize=3, label=key)
        ax.set_title(title)
        ax.set_xlabel("step")
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(panels) :]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(out / "curves.png", dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 4))
    for key in ("reward_mean", "eval/reward_mean"):
        xs, ys = series(records, key)
        if xs:
            ax.plot(xs, ys, marker="o" if key.startswith("eval/") else None, label=key)
    ax.set_xlabel("step")
    ax.set_ylabel("reward")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out / "reward.png", dpi=110)
    plt.close(fig)

    xs, ys = series(records, "eval/reward_mean")
    summary: dict[str, Any] = {
        "run_dir": str(run),
        "steps": max(int(r["step"]) for r in records),
        "files": [str(out / "curves.png"), str(out / "reward.png")],
    }
    if xs:
        summary.update(
            {
                "eval_first_step": xs[0],
                "eval_first": ys[0],
                "eval_last_step": xs[-1],
                "eval_last": ys[-1],
                "eval_curve": dict(zip(xs, ys, strict=True)),
            }
        )
    warning = hack_signature(records)
    if warning:
        summary["warning"] = warning
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    return summary


def report_command(args: list[str]) -> int:
    """`rlvr-gym report <run dir> [--out DIR]`."""
    parser = argparse.ArgumentParser(prog="rlvr-gym report", description="Plot learning curves of a training run.")
    parser.add_argument("run_dir")
    parser.add_argument("--out", help="output folder (default <run dir>/report)")
    ns = parser.parse_args(args)
    try:
        summary = report(ns.run_dir, ns.out)
    except FileNotFoundError as exc:
        print(f"error: {exc}")
        return 1
    print(json.dumps({k: v for k, v in summary.items() if k != "eval_curve"}, indent=1))
    return 0
