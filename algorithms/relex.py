"""RELEX: predict a later checkpoint from the early ones by rank-r SVD extrapolation (github weizhepei/RELEX,
`scripts/svd_extrapolation.py`; docs/algorithms-more.md).

Why: RLVR weight trajectories are close to a straight line in a low-dimensional subspace, so the first checkpoints
of a run predict where it is heading; a predicted checkpoint can stand in for many more training steps.

[CODE] (from the source), for every weight tensor separately: M[t] = theta_t - theta_0 (flattened) for the observed
checkpoints; rank-r SVD through the Gram matrix (G = M M^T, eigendecomposition, V = M^T U / S, directions with
S <= 1e-6 S_1 dropped); coefficients C = M V; a least-squares line c(t) = a t + b per component (optionally over the
last W checkpoints only); theta_target = theta_0 + c(t_target) V^T, reshaped.
Choices here: time is the checkpoint's optimizer-step number (RELEX uses the checkpoint index and rescales the
target; with evenly spaced checkpoints this is the same line). The trainer saves no step-0 checkpoint and a LoRA
adapter's initial A is random, so theta_0 is the first observed checkpoint unless `origin` is given; the tensors
are the checkpoint's trainable ones (LoRA A and B factors each extrapolated as its own tensor, as RELEX does per
weight tensor; a tied lm_head is saved once as the embedding). Keep every checkpoint with `keep_checkpoints: 0`.

    python -m rlvr_gym.algorithms.relex RUN_DIR --target 40 [--history 6] [--rank 1] [--window W] [--out DIR]
        [--check STEP]

writes `DIR/trainable.safetensors` (start a run from it with `model.init_adapter: DIR`); `--check` compares the
prediction and the last observed checkpoint against a saved checkpoint at STEP.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import torch

from .checkpoint import list_checkpoints

SV_FLOOR = 1e-6  # relative to the top singular value, as the source does


def _step_of(path: Path) -> int:
    return int(path.name.split("-")[-1])


def load_trainable(path: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    path = Path(path)
    return load_file(str(path / "trainable.safetensors" if path.is_dir() else path))


def extrapolate_tensor(
    deltas: torch.Tensor, times: Sequence[float], target: float, *, rank: int = 1, window: int | None = None
) -> torch.Tensor:
    """Predicted delta [d] at `target` from observed deltas [T, d] (theta_t - theta_0) at `times` (see module doc)."""
    m = deltas.double()
    t = torch.as_tensor(list(times), dtype=torch.float64)
    if m.shape[0] != len(t) or len(t) < 2:
        raise ValueError("extrapolation needs >= 2 observed checkpoints, one time each")
    eigval, eigvec = torch.linalg.eigh(m @ m.T)  # ascending
    order = torch.argsort(eigval, descending=True)[: min(rank, len(t))]
    s = eigval[order].clamp(min=0.0).sqrt()
    u = eigvec[:, order]
    keep = s > SV_FLOOR * s[0] if s[0] > 0 else torch.zeros_like(s, dtype=torch.bool)
    if not keep.any():
        return torch.zeros_like(m[0])
    v = (m.T @ u[:, keep]) / s[keep]  # [d, r]
    coeff = m @ v  # [T, r] = U S
    lo = 0 if window is None else max(0, len(t) - window)
    tw, cw = t[lo:], coeff[lo:]
    if len(tw) < 2:
        raise ValueError("a linear fit needs a window of >= 2 checkpoints")
    tc = tw - tw.mean()
    slope = (tc[:, None] * (cw - cw.mean(0))).sum(0) / tc.pow(2).sum()
    intercept = cw.mean(0) - slope * tw.mean()
    return v @ (slope * target + intercept)


def extrapolate_checkpoints(
    history: Sequence[dict[str, torch.Tensor]],
    times: Sequence[float],
    target: float,
    *,
    origin: dict[str, torch.Tensor] | None = None,
    rank: int = 1,
    window: int | None = None,
) -> dict[str, torch.Tensor]:
    """theta_target for every tensor of the checkpoints; without `origin`, history[0] is theta_0 (and is not a row)."""
    if origin is None:
        origin, history, times = history[0], history[1:], times[1:]
    out = {}
    for name, base in origin.items():
        deltas = torch.stack([h[name].double().flatten() - base.double().flatten() for h in history])
        pred = extrapolate_tensor(deltas, times, target, rank=rank, window=window)
        out[name] = (base.double() + pred.reshape(base.shape)).to(base.dtype)
    return out


def distance(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> float:
    """Euclidean distance between two checkpoints over all their tensors."""
    return float(sum((a[n].double() - b[n].double()).pow(2).sum() for n in a) ** 0.5)


def relex_run(
    run_dir: Path, target: int, *, history: int | None = None, rank: int = 1, window: int | None = None
) -> tuple[dict[str, torch.Tensor], list[int]]:
    """Extrapolate a run's first `history` complete checkpoints (all by default) to step `target`."""
    paths = list_checkpoints(Path(run_dir))
    paths = [p for p in paths if _step_of(p) < target][: history or None]
    if len(paths) < 3:
        raise ValueError(f"{run_dir}: need >= 3 checkpoints before step {target} (origin + 2), found {len(paths)}")
    steps = [_step_of(p) for p in paths]
    pred = extrapolate_checkpoints([load_trainable(p) for p in paths], steps, target, rank=rank, window=window)
    return pred, steps


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rlvr_gym.algorithms.relex", description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--target", type=int, required=True, help="optimizer step to predict")
    ap.add_argument("--history", type=int, default=None, help="use the first N checkpoints (default: all before)")
    ap.add_argument("--rank", type=int, default=1)
    ap.add_argument("--window", type=int, default=None, help="fit the line on the last W checkpoints only")
    ap.add_argument("--out", type=Path, default=None, help="folder for trainable.safetensors")
    ap.add_argument("--check", type=int, default=None, help="saved step to measure the prediction against")
    args = ap.parse_args(argv)
    pred, steps = relex_run(args.run_dir, args.target, history=args.history, rank=args.rank, window=args.window)
    report: dict[str, object] = {"observed_steps": steps, "target": args.target, "tensors": len(pred)}
    if args.out is not None:
        from safetensors.torch import save_file

        args.out.mkdir(parents=True, exist_ok=True)
        save_file({k: v.contiguous() for k, v in pred.items()}, str(args.out / "trainable.safetensors"))
        report["out"] = str(args.out / "trainable.safetensors")
    if args.check is not None:
        ckpts = {_step_of(p): p for p in list_checkpoints(args.run_dir)}
        if args.check not in ckpts:
            raise SystemExit(f"no saved checkpoint at step {args.check}")
        truth = load_trainable(ckpts[args.check])
        report["dist_pred"] = distance(pred, truth)
        report["dist_last_observed"] = distance(load_trainable(ckpts[steps[-1]]), truth)
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
