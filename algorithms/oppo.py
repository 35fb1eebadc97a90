"""OPPO: oracle-conditioned likelihood ratios as a running success probability (arXiv 2605.21851, no public code;
docs/algorithms-more.md).

Why: the ratio between an oracle-conditioned policy and the policy itself at each token is a Bayesian update of the
belief that the rollout will succeed; its increments give a dense, token-level advantage from one extra forward pass.

INFERRED (design choice): self-oracle = the policy shown " " + ground truth before the response (the
`hinted_logprobs` of CEPO); rho_t = pi_O(y_t | x, oracle, y_<t) / pi_theta(y_t | x, y_<t), both with the step's
behaviour weights; log p_t = log p_0 + sum_{k<=t} log rho_k, p_t clipped to <= 1, p_0 = the group's success rate;
A_t = p_t - p_{t-1} (p_{-1} = p_0); final token advantage = the estimator's A + kappa A_t, kappa = 1. A group with
p_0 = 0 gets A_t = 0 (no belief to update). The teacher-oracle variant (a frozen stronger model) is not implemented.
`OppoTrainer` (algorithm name `oppo`) applies it over any estimator, on the first generated turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from rlvr_gym.types import Episode

from .advantages import AdvantageOutput
from .cepo import OracleMixin, first_generated_turn, hinted_logprobs, with_turn_edits
from .trainer import Trainer


class OppoSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kappa: float = Field(1.0, gt=0.0)


def oppo_token_advantages(log_rho: np.ndarray, p0: float) -> np.ndarray:
    """A_t = p_t - p_{t-1} with p_t = min(1, p0 * exp(cumsum log rho)), p_{-1} = p0."""
    if p0 <= 0:
        return np.zeros(len(log_rho))
    p = np.minimum(1.0, np.exp(np.log(p0) + np.cumsum(np.asarray(log_rho, dtype=np.float64))))
    return np.diff(np.concatenate([[p0], p]))


class OppoTrainer(OracleMixin, Trainer):
    """The shared trainer with OPPO's dense oracle-ratio term added to the estimator's advantages."""

    settings_model = OppoSettings

    def update(self, episodes: Sequence[Episode], adv: AdvantageOutput) -> dict[str, float]:
        kappa = self.settings.kappa  # type: ignore[union-attr]
        success: dict[str, list[float]] = {}
        for ep in episodes:
            success.setdefault(ep.group_id, []).append(float(ep.passed))
        todo = [
            (i, t)
            for i, ep in enumerate(episodes)
            if adv.keep[i] and np.mean(success[ep.group_id]) > 0 and (t := first_generated_turn(ep)) is not None
        ]
        if not todo:
            return {**super().update(episodes, adv), "oppo/episodes": 0.0, "oppo/dense_abs_mean": 0.0}
        prompts = [list(episodes[i].turns[t].prompt_token_ids or []) for i, t in todo]
        resp = [list(episodes[i].turns[t].token_ids or []) for i, t in todo]
        hints = [self.encode_hint(self.oracle_answer(episodes[i])) for i, _ in todo]
        kw = {
            "pad_id": self.pad_id,
            "token_budget": self.cfg.micro_batch_tokens,
            "autocast": self.cfg.model.bf16_autocast,
        }
        self.model.eval()
        lp_oracle = hinted_logprobs(self.model, prompts, hints, resp, **kw)
        lp_policy = hinted_logprobs(self.model, prompts, [[] for _ in todo], resp, **kw)
        dense = [
            kappa * oppo_token_advantages(o - p, float(np.mean(success[episodes[i].group_id])))
            for (i, _), o, p in zip(todo, lp_oracle, lp_policy, strict=True)
        ]
        edits = {i: (t, partial(np.add, d)) for (i, t), d in zip(todo, dense, strict=True)}
        out = super().update(episodes, with_turn_edits(episodes, adv, edits))
        flat = np.concatenate(dense)
        out.update({"oppo/dense_abs_mean": float(np.abs(flat).mean()), "oppo/episodes": float(len(todo))})
        return out
