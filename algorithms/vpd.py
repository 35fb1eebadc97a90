"""VPD: language-feedback learning as variational EM on one network (arXiv 2605.15113, no public code;
docs/algorithms-more.md).

Why: a scalar reward throws away what a verifier or a sibling rollout could *say*; VPD lets the same weights act as a
teacher that reads that feedback (E-step: the teacher is sharpened on outcomes within a trust region) and as a
student that does not (M-step: the student matches the improved teacher on its own samples), so the feedback is
distilled into the feedback-free policy.

[PAPER] the EM scheme, the shared network, unpaired preference optimisation with a dynamic reference prior.
[INFERRED]: L_E = -mean_i log sigmoid(beta s_i [log pi(y_i | x, f_i) - log pi_ref(y_i | x, f_i)]), s_i = +1
for a passed rollout, -1 otherwise, pi_ref = the teacher at the start of the step (last iteration's snapshot: its
log-probs are taken once before the update); beta x 1.5 when the step's KL(pi || pi_ref) exceeds 1.5 x target, / 1.5
below target / 1.5 (target 0.05); L_M = mean_t sum_v pi(v | x, y_<t) [log pi(v | x, y_<t) - sg log pi(v | x, f, y_<t)]
(full-vocabulary reverse KL on the student's own samples); each step minimises L = L_M + L_E (one optimizer step;
the RL surrogate is not used). Our choices: f_i = the verdict (correct / incorrect, plus the env's feedback text) and
one sibling rollout of the group with the other outcome, as text placed between the prompt and the response (as
CEPO's teacher input); the first generated turn only; sequence log-probs are sums over response tokens; the KL for
the controller is the mean per-token log-ratio on the batch after the step; beta lives in the trainer's
`estimator_state` (checkpointed).

`VpdTrainer` (algorithm name `vpd`) replaces the policy-gradient update; the estimator's advantages are unused
beyond choosing which episodes train (kept rows).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from pydantic import BaseModel, ConfigDict, Field

from rlvr_gym.types import Episode

from .advantages import AdvantageOutput
from .cepo import first_generated_turn
from .modeling import _causal_lm
from .trainer import Trainer

STATE_KEY = "vpd"
ADAPT = 1.5


def student_teacher_kl(student_logits: torch.Tensor, teacher_logits: torch.Tensor) -> torch.Tensor:
    """Per-position reverse KL sum_v p_S (log p_S - sg log p_T), [T, V] logits in, [T] out."""
    ls = F.log_softmax(student_logits.float(), -1)
    lt = F.log_softmax(teacher_logits.detach().float(), -1)
    return (ls.exp() * (ls - lt)).sum(-1)


def e_step_loss(logp: torch.Tensor, ref_logp: torch.Tensor, sign: torch.Tensor, beta: float) -> torch.Tensor:
    """-mean log sigmoid(beta s (log pi - log pi_ref)) over sequences (unpaired preference optimisation)."""
    return -F.logsigmoid(beta * sign * (logp - ref_logp)).mean()


def adapt_beta(beta: float, kl: float, target: float = 0.05) -> float:
    """Tighten the trust region (beta x 1.5) when KL ran above 1.5 target, loosen (/ 1.5) below target / 1.5."""
    if kl > target * ADAPT:
        return beta * ADAPT
    if kl < target / ADAPT:
        return beta / ADAPT
    return beta


def feedback_text(ep: Episode, group: Sequence[Episode]) -> str:
    """The verdict and one sibling with the other outcome (none when the group agrees)."""
    verdict = "correct" if ep.passed else "incorrect"
    if ep.verdict is not None and ep.verdict.feedback:
        verdict += f" ({ep.verdict.feedback})"
    other = next((p for p in group if p.passed != ep.passed and p.turns), None)
    sibling = ""
    if other is not None:
        sibling = f" A {'correct' if other.passed else 'incorrect'} attempt was: {other.turns[-1].action}"
    return f"Feedback on this answer: {verdict}.{sibling}\n"


class VpdSettings(BaseModel):
    """`algorithm: {name: vpd, ...}` keys."""

    model_config = ConfigDict(extra="forbid")

    beta: float = Field(0.1, gt=0.0)  # initial beta (then adapted)
    kl_target: float = Field(0.05, gt=0.0)
    e_coef: float = Field(1.0, ge=0.0)
    m_coef: float = Field(1.0, ge=0.0)


class VpdTrainer(Trainer):
    """The shared trainer with VPD's E-step + M-step loss in place of the clipped surrogate."""

    settings_model = VpdSettings

    @classmethod
    def settings_from(cls, cfg: Any) -> BaseModel | None:
        ignored = [k for k in ("epochs", "minibatches") if getattr(cfg, k) != 1]
        ignored += [f"loss.{k}" for k in ("kl_coef", "entropy_coef") if getattr(cfg.loss, k) != 0]
        if ignored:
            raise ValueError(
                f"algorithm vpd takes one E+M optimizer step per batch and no surrogate terms: {ignored} would be ignored"
            )
        return super().settings_from(cfg)

    def response_logits(self, context: Sequence[int], response: Sequence[int]) -> torch.Tensor:
        """Logits [len(response), V] predicting each response token after `context`."""
        lm = _causal_lm(self.model)
        ids = torch.tensor([[*context, *response]])
        hidden = lm.get_decoder()(input_ids=ids).last_hidden_state[0, len(context) - 1 : -1]
        return lm.get_output_embeddings()(hidden).float()

    @staticmethod
    def _sequence_logp(logits: torch.Tensor, response: Sequence[int]) -> torch.Tensor:
        return F.log_softmax(logits, -1).gather(-1, torch.tensor(response).unsqueeze(-1)).sum()

    def update(self, episodes: Sequence[Episode], adv: AdvantageOutput) -> dict[str, float]:
        s: VpdSettings = self.settings  # type: ignore[assignment]
        state = self.estimator_state.setdefault(STATE_KEY, {"beta": s.beta})
        groups: dict[str, list[Episode]] = {}
        for ep in episodes:
            groups.setdefault(ep.group_id, []).append(ep)
        items = []
        for i, ep in enumerate(episodes):
            t = first_generated_turn(ep)
            if not adv.keep[i] or t is None:
                continue
            turn = ep.turns[t]
            fb = list(
                self.tokenizer(" " + feedback_text(ep, groups[ep.group_id]), add_special_tokens=False)["input_ids"]
            )
            prompt = list(turn.prompt_token_ids or [])
            items.append((prompt, prompt + fb, list(turn.token_ids or []), 1.0 if ep.passed else -1.0))
        if not items:
            return {"update/rows": 0.0}
        self.model.eval()
        with torch.no_grad():
            ref = torch.stack([self._sequence_logp(self.response_logits(tc, y), y) for _, tc, y, _ in items])
        self.model.train()
        beta = float(state["beta"])
        n_tokens = sum(len(y) for _, _, y, _ in items)
        e_sum, m_sum = 0.0, 0.0
        for k, (sc, tc, y, sign) in enumerate(items):
            t_logits = self.response_logits(tc, y)
            s_logits = self.response_logits(sc, y)
            l_e = e_step_loss(self._sequence_logp(t_logits, y), ref[k], torch.tensor(sign), beta) / len(items)
            l_m = student_teacher_kl(s_logits, t_logits).sum() / n_tokens
            (s.e_coef * l_e + s.m_coef * l_m).backward()
            e_sum, m_sum = e_sum + l_e.item(), m_sum + l_m.item()
        norm = torch.nn.utils.clip_grad_norm_(self.params, self.cfg.optim.grad_clip)
        self._set_lr()
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.model.eval()
        with torch.no_grad():
            new = torch.stack([self._sequence_logp(self.response_logits(tc, y), y) for _, tc, y, _ in items])
        kl = float((new - ref).sum()) / n_tokens
        state["beta"] = adapt_beta(beta, kl, s.kl_target) if math.isfinite(kl) else beta
        return {
            "update/rows": float(len(items)),
            "update/tokens": float(n_tokens),
            "update/grad_norm": float(norm),
            "update/optimizer_steps": 1.0,
            "vpd/loss_e": e_sum,
            "vpd/loss_m": m_sum,
            "vpd/kl_teacher": kl,
            "vpd/beta": beta,
            "vpd/beta_next": float(state["beta"]),
            "vpd/teacher_logp_shift_pos": _mean_shift(new - ref, [it[3] for it in items], 1.0),
            "vpd/teacher_logp_shift_neg": _mean_shift(new - ref, [it[3] for it in items], -1.0),
        }


def _mean_shift(shift: torch.Tensor, signs: list[float], which: float) -> float:
    picked = [float(x) for x, sg in zip(shift, signs, strict=True) if sg == which]
    return float(np.mean(picked)) if picked else 0.0
