"""POW3R: criterion weights adapted to rollout-level contrast (arXiv 2605.20164, no public code;
docs/algorithms-more.md).

Why: with a rubric of criteria, a criterion every rollout of a prompt satisfies (or none does) cannot tell the
rollouts apart; moving weight to the criteria that currently separate them sharpens the signal, while the human
weights and the balance between categories stay the objective.
INFERRED (design choice): criterion scores s_{k,i} in [0, 1] are the verdict's named `components`;
per prompt group, contrast c_k = std_i s_{k,i} (population std); w_k = h_k (eta + c_k), renormalised within each
category so that sum_{k in cat} w_k = sum_{k in cat} h_k; r_i = sum_k w_k s_{k,i} / sum_k h_k; then GRPO on r.
Defaults: every component with h = 1 in one category, eta = 0.1; a component an episode lacks scores 0.
Evaluation keeps the human weights (the verifier's own reward is untouched).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from .base import AdvantageInput, AdvantageOutput
from .group import group_normalise

DEFAULT_CATEGORY = "all"


def contrast_weights(scores: np.ndarray, human: np.ndarray, categories: list[str], eta: float = 0.1) -> np.ndarray:
    """Adapted weights w [K] from one group's scores [G, K], human weights h [K] and each criterion's category."""
    raw = human * (eta + scores.std(axis=0))
    w = np.zeros_like(raw)
    cats = np.array(categories)
    for c in set(categories):
        ix = cats == c
        total = raw[ix].sum()
        w[ix] = raw[ix] * human[ix].sum() / total if total > 0 else human[ix]
    return w


def pow3r(
    inp: AdvantageInput,
    *,
    weights: Mapping[str, float] | None = None,
    categories: Mapping[str, str] | None = None,
    eta: float = 0.1,
    scale_std: bool = True,
) -> AdvantageOutput:
    if not inp.episodes:
        raise ValueError("pow3r reads each episode's verdict components (criterion scores): it needs episodes")
    comps = [dict(ep.verdict.components) if ep.verdict is not None else {} for ep in inp.episodes]
    names = sorted(weights) if weights else sorted({k for c in comps for k in c})
    if not names:
        raise ValueError("pow3r: the episodes' verdicts have no components to weigh")
    human = np.array([float((weights or {}).get(k, 1.0)) for k in names])
    cats = [(categories or {}).get(k, DEFAULT_CATEGORY) for k in names]
    scores = np.array([[float(c.get(k, 0.0)) for k in names] for c in comps])
    shaped = np.zeros(len(inp))
    moved = []
    for ix in inp.groups():
        w = contrast_weights(scores[ix], human, cats, eta)
        shaped[ix] = scores[ix] @ w / human.sum()
        moved.append(np.abs(w - human).sum() / human.sum())
    adv = group_normalise(replace(inp, rewards=shaped), scale_std=scale_std)
    return AdvantageOutput(episode=adv, metrics={"pow3r_weight_shift": float(np.mean(moved))})
