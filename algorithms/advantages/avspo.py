"""AVSPO: virtual reward samples against advantage collapse (arXiv 2605.21125; repository empty).

[PAPER] The Advantage Collapse Rate (ACR) is the fraction of groups whose reward variance is below a threshold; AVSPO
adds virtual reward samples to the normalisation statistics only (they get no gradient), with a strength that adapts
to the running ACR.
INFERRED (design choice, docs/algorithms.md): ACR is an EMA in `inp.state["avspo_acr_ema"]`; a collapsed group
of common value c gets k = max(1, ceil(kappa * ACR_ema * G)) virtual rewards at the far end of the reward range
(r_max if c is in the lower half, else r_min); its real samples get A_i = (r_i - mean') / (std' + eps) over
real + virtual values. Non-collapsed groups are plain GRPO. All-correct groups thus get a small positive push and
all-wrong groups a negative one instead of zero gradient.
"""

from __future__ import annotations

import math

import numpy as np

from .base import COLLAPSE_VAR, EPS, AdvantageInput, AdvantageOutput, advantage_collapse_rate
from .group import group_normalise

STATE_KEY = "avspo_acr_ema"


def avspo(
    inp: AdvantageInput,
    *,
    kappa: float = 1.0,
    ema: float = 0.9,
    reward_range: tuple[float, float] = (0.0, 1.0),
    collapse_var: float = COLLAPSE_VAR,
    std_ddof: int = 1,
    eps: float = EPS,
) -> AdvantageOutput:
    acr_now = advantage_collapse_rate(inp, collapse_var)
    prev = inp.state.get(STATE_KEY)
    acr_ema = acr_now if prev is None else ema * float(prev) + (1.0 - ema) * acr_now
    inp.state[STATE_KEY] = acr_ema
    adv = group_normalise(inp, std_ddof=std_ddof, eps=eps)
    lo, hi = reward_range
    injected = 0
    for ix in inp.groups():
        r = inp.rewards[ix]
        if r.var() >= collapse_var or acr_ema <= 0.0:
            continue
        c = float(r[0])
        k = max(1, math.ceil(kappa * acr_ema * len(r)))
        virtual = hi if c <= (lo + hi) / 2 else lo
        if virtual == c:
            continue
        pooled = np.concatenate([r, np.full(k, virtual)])
        adv[ix] = (r - pooled.mean()) / (pooled.std(ddof=std_ddof) + eps)
        injected += k
    return AdvantageOutput(episode=adv, metrics={"acr_ema": acr_ema, "avspo_virtual_samples": float(injected)})
