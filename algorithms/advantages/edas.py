"""EDAS: error-diversity advantage shaping (arXiv 2605.17333, no public code).

INFERRED (design choice, docs/algorithms.md): start from GRPO advantages; for each incorrect rollout i with final answer
a_i, f_i = count(a_i among the group's incorrect rollouts) / n_incorrect, and A_i <- A_i * clip(f_i / mean_wrong(f),
lo, hi). A wrong answer the group keeps repeating is penalised harder than a rare one; correct rollouts are
unchanged. Rollouts without an extracted answer share one "<none>" bucket (a repeated format failure is a dominant
error too).
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from .base import AdvantageInput, AdvantageOutput
from .group import group_normalise

NO_ANSWER = "<none>"


def error_frequency_scale(answers: list[str], lo: float = 0.5, hi: float = 2.0) -> np.ndarray:
    """Mean-preserving (before clipping) scale f_i / mean(f) of each wrong answer's within-group frequency."""
    counts = Counter(answers)
    freq = np.array([counts[a] / len(answers) for a in answers])
    return np.clip(freq / freq.mean(), lo, hi)


def edas(inp: AdvantageInput, *, scale_std: bool = True, lo: float = 0.5, hi: float = 2.0) -> AdvantageOutput:
    adv = group_normalise(inp, scale_std=scale_std)
    answers = inp.answers or [None] * len(inp)
    shaped = 0
    for ix in inp.groups():
        wrong = [i for i in ix if not inp.correct[i]]
        if len(wrong) < 2:
            continue
        keys = [_normalise(answers[i]) for i in wrong]
        scale = error_frequency_scale(keys, lo, hi)
        adv[wrong] = adv[wrong] * scale
        shaped += int(np.sum(scale != 1.0))
    return AdvantageOutput(episode=adv, metrics={"edas_shaped": float(shaped)})


def _normalise(answer: str | None) -> str:
    return NO_ANSWER if answer is None else " ".join(answer.split()).lower()
