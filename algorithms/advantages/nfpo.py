"""NFPO: multi-step likelihood-ratio correction (arXiv 2605.20865, no public code; docs/algorithms-more.md).

The advantages are GRPO's; what changes is the loss, which the estimator prescribes through `loss_overrides`
(`nfpo_n` switches `losses.policy_loss` to the N-step forward-trace surrogate, see `losses.forward_trace`).
INFERRED (design choice): w_t = rho_t * c_t, c_t = prod of the next N-1 tokens' ratios (detached,
clipped to [0, 2]); tokens whose w_t left [1 - eps_l, 1 + eps_h] in A's direction are masked; L = -sum M w A / tokens.
Defaults N = 4, eps_l = 0.2, eps_h = 0.28. The trace runs over a row's generated tokens (all turns of a multi-turn
episode, env tokens skipped): the whole trajectory's remaining actions, as the exact policy gradient would.
N = 1 has clipped PPO's gradient; on-policy (every ratio 1) it is vanilla PG, so it needs epochs x minibatches > 1.
"""

from __future__ import annotations

from .base import AdvantageInput, AdvantageOutput
from .group import group_normalise


def nfpo(
    inp: AdvantageInput,
    *,
    n: int = 4,
    c_max: float = 2.0,
    clip_low: float = 0.2,
    clip_high: float = 0.28,
    scale_std: bool = True,
) -> AdvantageOutput:
    if n < 1:
        raise ValueError(f"nfpo: n must be >= 1, got {n}")
    return AdvantageOutput(
        episode=group_normalise(inp, scale_std=scale_std),
        loss_overrides={"nfpo_n": n, "nfpo_c_max": c_max, "clip_low": clip_low, "clip_high": clip_high},
    )
