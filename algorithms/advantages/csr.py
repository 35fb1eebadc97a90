"""CSR: correctness + semantic calibration reward (arXiv 2605.15588, no public code; docs/algorithms-more.md).

Why: a policy should agree with itself when it is right and not when it is wrong, so that the share of samples
giving the same answer can serve as its confidence at inference (no verbalised confidence).
INFERRED (design choice): cluster a group's answers by normalised exact match (whitespace collapsed,
lower case: the "semantic equivalence" a math/short-answer verifier implies; an NLI or judge clustering would plug
in here); a_i = (|cluster(i)| - 1) / (G - 1); r_i = reward_i + lam * (a_i if correct_i else -a_i), lam = 0.5, where
reward_i is the verifier's reward (1[correct] on binary tasks, as the paper writes it); then GRPO on r.
Rollouts without an extracted answer are singletons (a_i = 0): failing to answer is not agreement.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import numpy as np

from .base import AdvantageInput, AdvantageOutput
from .group import group_normalise


def _key(answer: str | None) -> str | None:
    return None if answer is None else " ".join(answer.split()).lower()


def agreement(answers: list[str | None]) -> np.ndarray:
    """a_i = (size of i's answer cluster - 1) / (G - 1) within one group; 0 for a missing answer or G = 1."""
    keys = [_key(a) for a in answers]
    counts = Counter(k for k in keys if k is not None)
    g = len(keys)
    if g < 2:
        return np.zeros(g)
    return np.array([(counts[k] - 1) / (g - 1) if k is not None else 0.0 for k in keys])


def csr_rewards(inp: AdvantageInput, lam: float = 0.5) -> np.ndarray:
    """The shaped rewards r_i = reward_i ± lam * a_i (sign: + if correct, - if not)."""
    answers = inp.answers or [None] * len(inp)
    shaped = inp.rewards.copy()
    for ix in inp.groups():
        a = agreement([answers[i] for i in ix])
        sign = np.where(np.asarray(inp.correct)[ix], 1.0, -1.0)
        shaped[ix] += lam * sign * a
    return shaped


def csr(inp: AdvantageInput, *, lam: float = 0.5, scale_std: bool = True) -> AdvantageOutput:
    shaped = csr_rewards(inp, lam)
    adv = group_normalise(replace(inp, rewards=shaped), scale_std=scale_std)
    bonus = shaped - inp.rewards
    correct = np.asarray(inp.correct, dtype=bool)
    return AdvantageOutput(
        episode=adv,
        metrics={
            "csr_bonus_correct": float(bonus[correct].mean()) if correct.any() else 0.0,
            "csr_penalty_wrong": float(bonus[~correct].mean()) if (~correct).any() else 0.0,
        },
    )
