"""Unlearnability analysis: which prompts RLVR cannot teach, and whether their gradients point elsewhere (arXiv
2605.16787; github yulinchen99/unlearnability-rlvr; docs/algorithms-more.md). A post-hoc diagnostic, no new objective.

Why: a prompt that stays unsolved after training in every seed is either never rewarded (nothing to learn from) or
rewarded yet still not learned; the second kind is the interesting one, and comparing its policy gradient with the
learnable prompts' says whether it pulls against them.

[CODE] (from the source: `classification/finalize_unlearnable_example_id.py`, `gradient_analysis/*`): tau = 0.1 on
pass@1 (32 samples at T = 0.7 in the source); no_reward = prompts whose logged mean training reward stays 0 in some
run; unlearnable = pass@1 <= tau after training in every run, minus no_reward; learnable = initially <= tau and
> tau after training in every run; easy = initially > tau. Gradient probe: per prompt, the mean over its correct
rollouts of grad[-r mean_t exp(logp_t - sg logp_t)] on the LoRA weights (keys containing "mlp" dropped), divided by
max|g| when that exceeds 1; pairwise cosine.
[INFERRED]: easy is decided first (an easy prompt is never also unlearnable); a hard prompt learned in some runs
only is `mixed`; a prompt missing from a run's table counts as not passing it.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch

TAU = 0.1


def partition(
    initial: Mapping[str, float],
    final: Sequence[Mapping[str, float]],
    train_rewards: Sequence[Mapping[str, Sequence[float]]],
    tau: float = TAU,
) -> dict[str, set[str]]:
    """Prompt ids by class: easy, no_reward, unlearnable, learnable, mixed (initial/final pass@1, one final table and
    one per-prompt logged training-reward history per run)."""
    out: dict[str, set[str]] = {k: set() for k in ("easy", "no_reward", "unlearnable", "learnable", "mixed")}
    for pid, p0 in initial.items():
        if p0 > tau:
            out["easy"].add(pid)
        elif any(pid in run and not any(run[pid]) for run in train_rewards):
            out["no_reward"].add(pid)
        elif all(run.get(pid, 0.0) <= tau for run in final):
            out["unlearnable"].add(pid)
        elif all(run.get(pid, 0.0) > tau for run in final):
            out["learnable"].add(pid)
        else:
            out["mixed"].add(pid)
    return out


def probe_params(model: Any) -> dict[str, torch.nn.Parameter]:
    """The LoRA weights the probe differentiates: trainable, names without "mlp"."""
    return {n: p for n, p in model.named_parameters() if p.requires_grad and "mlp" not in n}


def prompt_gradient(model: Any, rollouts: Sequence[tuple[Sequence[int], Sequence[int], float]]) -> torch.Tensor:
    """Flattened mean over correct rollouts (prompt ids, response ids, reward) of grad[-r mean_t exp(lp - sg lp)],
    scaled down to max|g| = 1 when larger."""
    params = probe_params(model)
    total = torch.zeros(sum(p.numel() for p in params.values()))
    for prompt, response, reward in rollouts:
        ids = torch.tensor([[*prompt, *response]])
        logits = model(input_ids=ids).logits[0, len(prompt) - 1 : -1].float()
        lp = torch.log_softmax(logits, -1).gather(-1, torch.tensor(response).unsqueeze(-1)).squeeze(-1)
        loss = -reward * torch.exp(lp - lp.detach()).mean()
        grads = torch.autograd.grad(loss, list(params.values()), allow_unused=True)
        total += torch.cat(
            [
                (g if g is not None else torch.zeros_like(p)).flatten()
                for g, p in zip(grads, params.values(), strict=True)
            ]
        )
    g = total / max(len(rollouts), 1)
    peak = g.abs().max()
    return g / peak if peak > 1 else g


def cosine_matrix(grads: Mapping[str, torch.Tensor]) -> dict[str, dict[str, float]]:
    """Pairwise cosine of the prompts' gradients in float64 (0 where a gradient is zero)."""
    names = list(grads)
    unit = {n: g.double() / g.double().norm() if g.norm() > 0 else g.double() for n, g in grads.items()}
    return {a: {b: float(unit[a] @ unit[b]) for b in names} for a in names}


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m rlvr_gym.algorithms.unlearnability --initial P0.json --final R1.json R2.json --rewards H1.json
    H2.json`: JSON tables {prompt_id: pass@1} and {prompt_id: [logged mean rewards]}; prints the class sizes and ids."""
    ap = argparse.ArgumentParser(prog="python -m rlvr_gym.algorithms.unlearnability")
    ap.add_argument("--initial", type=Path, required=True)
    ap.add_argument("--final", type=Path, nargs="+", required=True)
    ap.add_argument("--rewards", type=Path, nargs="+", required=True)
    ap.add_argument("--tau", type=float, default=TAU)
    args = ap.parse_args(argv)

    def read(p: Path) -> Any:
        return json.loads(p.read_text())

    classes = partition(read(args.initial), [read(p) for p in args.final], [read(p) for p in args.rewards], args.tau)
    print(json.dumps({k: {"count": len(v), "ids": sorted(v)} for k, v in classes.items()}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
