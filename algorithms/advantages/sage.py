"""SAGE: a reverse-KL anchor reshaped to q * pi_ref (github tally0818/SAGE, `src/train/guide_functions.py`;
docs/algorithms-more.md).

The advantages are GRPO's; the change is the KL term, which the estimator prescribes through `loss_overrides`:
per token, log pi_anchor = log pi_ref + log q_t and the k3 KL to that anchor, beta = 0.05 (`losses.policy_loss`).
[CODE] the branch guide (the source's default): q_t = clamp(1 + 0.3 ReLU(H_t - 1.2), 0.6, 1.4), H_t the policy's
detached token entropy. Not implemented: the stochastic `token` and `random` guides with their cosine-annealed
schedules. Needs the reference (LoRA: the base with the adapter off; `loss.log_kl` or `kl_coef` > 0 provide it).
"""

from __future__ import annotations

from .base import AdvantageInput, AdvantageOutput
from .group import group_normalise


def sage(
    inp: AdvantageInput,
    *,
    beta: float = 0.05,
    alpha: float = 0.3,
    entropy_floor: float = 1.2,
    q_min: float = 0.6,
    q_max: float = 1.4,
    scale_std: bool = True,
) -> AdvantageOutput:
    if beta <= 0:
        raise ValueError("sage: beta must be > 0 (the reshaped anchor acts only through the KL term)")
    return AdvantageOutput(
        episode=group_normalise(inp, scale_std=scale_std),
        loss_overrides={
            "sage_guide": "branch",
            "kl_coef": beta,
            "kl_estimator": "k3",
            "sage_alpha": alpha,
            "sage_entropy_floor": entropy_floor,
            "sage_q_min": q_min,
            "sage_q_max": q_max,
        },
    )
