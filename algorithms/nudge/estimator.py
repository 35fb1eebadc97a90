"""The `nudge` advantage: intra-context (r - mu_c) + lambda * inter-context (mu_c - mu_bar), standardised per problem.

Per problem (one advantage group = all N rollouts of a problem, hinted or dropped): mu_bar = mean reward of all N,
mu_c = mean reward of the rollouts that used context c. A hinted rollout gets A = (r - mu_c) + lambda (mu_c - mu_bar),
a dropped (plain-prompt) one A = r - mu_bar; then A <- (A - mean A) / (std_pop(A) + eps) over the problem's N.
lambda > 1 favours contexts that beat the problem average beyond what single rollouts say.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rlvr_gym.algorithms.advantages.base import AdvantageInput, AdvantageOutput

from .allocation import nudge_meta


def context_ids_of(inp: AdvantageInput) -> list[int | None]:
    """Context id of each episode from its allocation metadata (None = dropped or not a nudge rollout)."""
    return [nudge_meta(ep).get("context_id") for ep in inp.episodes] if inp.episodes else [None] * len(inp)


def decomposed(rewards: np.ndarray, contexts: Sequence[int | None], adv_lambda: float) -> np.ndarray:
    """Un-standardised advantages of one problem's rollouts."""
    mu_bar = rewards.mean()
    out = rewards - mu_bar
    for c in {c for c in contexts if c is not None}:
        ix = np.array([i for i, ci in enumerate(contexts) if ci == c])
        mu_c = rewards[ix].mean()
        out[ix] = (rewards[ix] - mu_c) + adv_lambda * (mu_c - mu_bar)
    return out


def nudge(
    inp: AdvantageInput, *, adv_lambda: float = 1.1, eps: float = 1e-5, context_ids: Sequence[int | None] | None = None
) -> AdvantageOutput:
    """NudgeRL advantages (METHODS.md section 2); `context_ids` defaults to the episodes' nudge metadata."""
    contexts = list(context_ids) if context_ids is not None else context_ids_of(inp)
    if len(contexts) != len(inp):
        raise ValueError("context_ids must have one entry per episode")
    adv = np.zeros(len(inp))
    inter_abs: list[float] = []
    for ix in inp.groups():
        raw = decomposed(inp.rewards[ix], [contexts[i] for i in ix], adv_lambda)
        adv[ix] = (raw - raw.mean()) / (raw.std() + eps)
        inter_abs.append(float(np.abs(raw - (inp.rewards[ix] - inp.rewards[ix].mean())).mean()))
    hinted = np.array([c is not None for c in contexts], dtype=bool)
    metrics = {
        "nudge/hinted_fraction": float(hinted.mean()) if len(inp) else 0.0,
        "nudge/hinted_pass": float(inp.rewards[hinted].mean()) if hinted.any() else 0.0,
        "nudge/plain_pass": float(inp.rewards[~hinted].mean()) if (~hinted).any() else 0.0,
        "nudge/decomposition_shift": float(np.mean(inter_abs)) if inter_abs else 0.0,
    }
    for c in sorted({c for c in contexts if c is not None}):  # which hint (by position: technique, distractor) helps
        metrics[f"nudge/context{c}_pass"] = float(
            np.mean([r for r, ci in zip(inp.rewards, contexts, strict=True) if ci == c])
        )
    return AdvantageOutput(episode=adv, metrics=metrics)
