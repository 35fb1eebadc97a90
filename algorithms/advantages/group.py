"""Group-relative outcome estimators: GRPO (and Dr.GRPO), RLOO and DAPO (with its overlong reward shaping).

All give one advantage per episode, relative to the other rollouts of the same group. A singleton group has
no baseline and gets advantage 0 (design choice: verl instead uses mean 0 / std 1, i.e. A = r, which rewards the
raw reward scale rather than a relative improvement).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .base import COLLAPSE_VAR, EPS, AdvantageInput, AdvantageOutput

DAPO_LOSS = {"clip_low": 0.2, "clip_high": 0.28, "aggregation": "token_mean"}  # clip-higher, token-level loss


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


def overlong_penalty(lengths: np.ndarray, max_tokens: int, buffer: int, factor: float = 1.0) -> np.ndarray:
    """DAPO's soft overlong punishment: 0 up to `max_tokens - buffer` generated tokens, then a linear ramp to
    `-factor` at `max_tokens` (and beyond): a response that runs into the length budget loses reward smoothly."""
    expected = max_tokens - buffer
    return np.minimum(-(lengths - expected) / buffer * factor, 0.0)


def response_lengths(inp: AdvantageInput) -> np.ndarray:
    """Generated tokens of each episode's longest turn (the budget is per turn; DAPO's tasks have one turn)."""
    return np.array([max((len(t.token_ids or []) for t in ep.turns), default=0) for ep in inp.episodes], dtype=float)


def dapo(
    inp: AdvantageInput,
    *,
    scale_std: bool = True,
    collapse_var: float = COLLAPSE_VAR,
    overlong_buffer: int | None = None,
    max_response_tokens: int | None = None,
    overlong_penalty_factor: float = 1.0,
) -> AdvantageOutput:
    """DAPO: GRPO advantages on the (optionally length-shaped) rewards; all-equal groups are dropped.

    Dynamic sampling proper - drawing more prompts until the step holds `prompts_per_step` groups of mixed reward -
    is the trainer's (`rollout.dynamic_sampling`, on by default for this estimator), since only it can collect; what
    is left here drops any group that is still uninformative (`dropped_groups`). With `overlong_buffer` set, the
    soft overlong punishment (`overlong_penalty`) is added to each reward before normalising; `max_response_tokens`
    defaults to the rollout's `max_new_tokens` (filled in when the config loads). The method's loss settings
    (clip-higher 0.2/0.28, token-level aggregation) travel as overrides.
    """
    metrics: dict[str, float] = {}
    if overlong_buffer:
        if max_response_tokens is None or not inp.episodes:
            raise ValueError("overlong shaping needs episodes and max_response_tokens (the generation budget)")
        penalty = overlong_penalty(response_lengths(inp), max_response_tokens, overlong_buffer, overlong_penalty_factor)
        inp = replace(inp, rewards=inp.rewards + penalty)
        metrics["overlong_penalised"] = float(np.mean(penalty < 0))
        metrics["overlong_penalty_mean"] = float(penalty.mean())
    adv = group_normalise(inp, scale_std=scale_std)
    keep = np.ones(len(inp), dtype=bool)
    groups = inp.groups()
    dropped = 0
    for ix in groups:
        if len(ix) < 2 or inp.rewards[ix].var() < collapse_var:
            keep[ix] = False
            adv[ix] = 0.0
            dropped += 1
    metrics.update({"dropped_groups": float(dropped), "dropped_fraction": dropped / len(groups) if groups else 0.0})
    return AdvantageOutput(episode=adv, keep=keep, metrics=metrics, loss_overrides=dict(DAPO_LOSS))
