"""LamPO: pairwise decomposed advantage with confidence-aware weights (arXiv 2605.21235, no public code).

INFERRED (design choice, docs/algorithms.md): A_i = 1/(G-1) * sum_{j != i} (r_i - r_j) * w_ij with
w_ij = 2 * sigmoid(beta * (l_j - l_i) * sign(r_i - r_j)), l = length-normalised sequence log-prob under the
behaviour policy. Pairs where the model is more confident in the worse response weigh more (w > 1), pairs where it
already prefers the better one weigh less. With beta = 0 every w_ij = 1 and A reduces to RLOO.
The optional ROUGE-L auxiliary reward of the paper is left to the reward side (pass it in `rewards`).
"""

from __future__ import annotations

import numpy as np

from .base import AdvantageInput, AdvantageOutput


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))  # overflow-free logistic


def lampo(inp: AdvantageInput, *, beta: float = 1.0) -> AdvantageOutput:
    """Pairwise advantage; needs `inp.seq_logprobs` (defaults to zeros = unweighted pairs)."""
    ell = inp.seq_logprobs if inp.seq_logprobs is not None else np.zeros(len(inp))
    adv = np.zeros(len(inp))
    weight_sum, pairs = 0.0, 0
    for ix in inp.groups():
        g = len(ix)
        if g < 2:
            continue
        r, lp = inp.rewards[ix], ell[ix]
        diff = r[:, None] - r[None, :]  # r_i - r_j
        w = 2.0 * _sigmoid(beta * (lp[None, :] - lp[:, None]) * np.sign(diff))
        np.fill_diagonal(w, 0.0)
        adv[ix] = (diff * w).sum(axis=1) / (g - 1)
        informative = diff != 0
        weight_sum += float(w[informative].sum())
        pairs += int(informative.sum())
    return AdvantageOutput(episode=adv, metrics={"lampo_mean_pair_weight": weight_sum / pairs if pairs else 1.0})
