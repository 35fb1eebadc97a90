"""Mu-GRPO: negative-advantage veto of post-trigger suffix tokens + relaxed clipping (arXiv 2605.17570, no code).

The advantages are GRPO's; what changes is the loss, so the estimator prescribes it through `loss_overrides`:
`veto_eps` turns on the veto in `losses.policy_loss`, and the clip range is relaxed.
INFERRED (design choice, docs/algorithms.md): in a response with A < 0, find the first generated token t* whose
importance ratio pi_theta / pi_old leaves [1 - eps_v, 1 + eps_v]; tokens t >= t* get no gradient
(`rlvr_gym.algorithms.losses.veto_mask`). Defaults eps_v = 0.2, clip_low = 0.2, clip_high = 0.4 (the paper's values are
not public).
"""

from __future__ import annotations

from .base import AdvantageInput, AdvantageOutput
from .group import group_normalise


def mu_grpo(
    inp: AdvantageInput, *, veto_eps: float = 0.2, clip_low: float = 0.2, clip_high: float = 0.4, scale_std: bool = True
) -> AdvantageOutput:
    return AdvantageOutput(
        episode=group_normalise(inp, scale_std=scale_std),
        loss_overrides={"veto_eps": veto_eps, "clip_low": clip_low, "clip_high": clip_high},
    )
