"""Group-relative outcome estimators: GRPO (and Dr.GRPO), RLOO and DAPO dynamic sampling.

All three give one advantage per episode, relative to the other rollouts of the same group. A singleton group has
no baseline and gets advantage 0 (design choice: verl instead uses mean 0 / std 1, i.e. A = r, which rewards the
raw reward scale rather than a relative improvement).
"""

from __future__ import annotations

import numpy as np

from .base import COLLAPSE_VAR, EPS, AdvantageInput, AdvantageOutput


def group_normalise(inp: AdvantageInput, *, scale_std: bool = True, std_ddof: int = 1, eps: float = EPS) -> np.ndarray:
    """(r - group mean) / (group std + eps); `scale_std=False` keeps only the mean subtraction (Dr.GRPO)."""
    adv = np.zeros(len(inp))
    for ix in inp.groups():
        r = inp.rewards[ix]
        if len(r) < 2:
            continue
        centred = r - r.mean()
        adv[ix] = centred / (r.std(ddof=std_ddof) + eps) if scale_std else centred
    return adv


def grpo(inp: AdvantageInput, *, scale_std: bool = True, std_ddof: int = 1, eps: float = EPS) -> AdvantageOutput:
    """GRPO: z-scored group rewards (unbiased std, as in TRL/verl). `scale_std=False` gives Dr.GRPO."""
    return AdvantageOutput(episode=group_normalise(inp, scale_std=scale_std, std_ddof=std_ddof, eps=eps))


def dr_grpo(inp: AdvantageInput) -> AdvantageOutput:
    """Dr.GRPO: mean subtraction only (no std division, which up-weights near-collapsed groups)."""
    return AdvantageOutput(episode=group_normalise(inp, scale_std=False))


def rloo(inp: AdvantageInput) -> AdvantageOutput:
    """REINFORCE leave-one-out: A_i = r_i - mean_{j != i} r_j = G/(G-1) * (r_i - mean)."""
    adv = np.zeros(len(inp))
    for ix in inp.groups():
        r = inp.rewards[ix]
        g = len(r)
        if g < 2:
            continue
        adv[ix] = r - (r.sum() - r) / (g - 1)
    return AdvantageOutput(episode=adv)


def dapo(inp: AdvantageInput, *, scale_std: bool = True, collapse_var: float = COLLAPSE_VAR) -> AdvantageOutput:
    """DAPO: GRPO advantages with dynamic sampling, i.e. groups whose rewards are all equal are dropped.

    DAPO proper keeps sampling until the batch is full of informative groups; here the drop is reported
    (`dropped_groups`, `dropped_fraction`) and the trainer may over-sample. Singleton groups are dropped too (no
    contrast). The method's loss settings (clip-higher 0.2/0.28, token-level aggregation) travel as overrides.
    """
    adv = group_normalise(inp, scale_std=scale_std)
    keep = np.ones(len(inp), dtype=bool)
    groups = inp.groups()
    dropped = 0
    for ix in groups:
        if len(ix) < 2 or inp.rewards[ix].var() < collapse_var:
            keep[ix] = False
            adv[ix] = 0.0
            dropped += 1
    metrics = {"dropped_groups": float(dropped), "dropped_fraction": dropped / len(groups) if groups else 0.0}
    return AdvantageOutput(
        episode=adv,
        keep=keep,
        metrics=metrics,
        loss_overrides={"clip_low": 0.2, "clip_high": 0.28, "aggregation": "token_mean"},
    )
