"""CEPO: token weights from a contrast of answer-conditioned teachers (github ahmedheakl/CEPO,
`verl/trainer/core_algos.py::apply_cepo_weighting`; docs/algorithms-more.md).

Why: a sequence-level advantage credits every token alike; the same policy, shown the right answer (r+) or the
group's worst wrong answer (r-) just before the response, tells which tokens that answer explains.

[CODE] (from the source): the teacher is the policy itself (same weights); teacher input = [prompt tokens, r, response
tokens], r+ = " " + ground truth, r- = " " + the \\boxed{} answer of the group's worst rejected rollout (score < 0.5;
no box: its first 50 characters); a group with no rejected rollout has r- = r+.
Delta_t = sg(log P_T+(y_t) - log P_T-(y_t)); w_t = exp(sign(A) Delta_t); A_t <- A [(1 - lam) + lam clip(w_t, 1 - eps_w,
1 + eps_w)]; lam from lam0 = 0.5 linearly to 0 over 25 steps; eps_w = 0.2 (the run script's value).
[INFERRED] the hint conditions the first generated turn only (the source is single-turn); the ground truth comes
from the rollout env's task (`Episode.task_index`), the trainer's explicit oracle path, as NudgeRL's hints do.
`CepoTrainer` (algorithm name `cepo`) applies it over any estimator. `hinted_logprobs` is shared with OPPO.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np
import torch
from pydantic import BaseModel, ConfigDict, Field

from rlvr_gym.types import Episode

from .advantages import AdvantageOutput
from .advantages.base import last_boxed
from .batch import Row, collate, micro_batches
from .modeling import token_logprobs
from .trainer import Trainer

REJECTED_BELOW = 0.5
FALLBACK_CHARS = 50


class CepoSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    lam0: float = Field(0.5, ge=0.0, le=1.0)
    decay_steps: int = Field(25, ge=1)
    eps_w: float = Field(0.2, ge=0.0, lt=1.0)


def cepo_lambda(step: int, lam0: float = 0.5, decay_steps: int = 25) -> float:
    """lam0 decayed linearly to 0 at `decay_steps` (0-based optimizer-step index of the training step)."""
    return lam0 * max(0.0, 1.0 - step / decay_steps)


def cepo_scale(delta: np.ndarray, adv: float, lam: float, eps_w: float = 0.2) -> np.ndarray:
    """The factor [(1 - lam) + lam clip(exp(sign(A) Delta), 1 - eps_w, 1 + eps_w)] that multiplies A per token."""
    w = np.exp(np.sign(adv) * np.asarray(delta, dtype=np.float64))
    return (1.0 - lam) + lam * np.clip(w, 1.0 - eps_w, 1.0 + eps_w)


def first_generated_turn(ep: Episode) -> int | None:
    for t, turn in enumerate(ep.turns):
        if turn.token_ids and turn.prompt_token_ids is not None:
            return t
    return None


def negative_hints(episodes: Sequence[Episode]) -> dict[str, str | None]:
    """Per group: the answer text of its worst rejected rollout (reward < 0.5), or None when there is none."""
    worst: dict[str, Episode] = {}
    for ep in episodes:
        r = ep.reward if ep.reward is not None else 0.0
        if r < REJECTED_BELOW and (ep.group_id not in worst or r < (worst[ep.group_id].reward or 0.0)):
            worst[ep.group_id] = ep
    out: dict[str, str | None] = {ep.group_id: None for ep in episodes}
    for gid, ep in worst.items():
        text = ep.turns[-1].action if ep.turns else ""
        boxed = last_boxed(text)
        out[gid] = boxed if boxed is not None else text[:FALLBACK_CHARS]
    return out


@torch.no_grad()
def hinted_logprobs(
    model: Any,
    prompts: Sequence[Sequence[int]],
    hints: Sequence[Sequence[int]],
    responses: Sequence[Sequence[int]],
    *,
    pad_id: int = 0,
    token_budget: int = 2048,
    autocast: bool = False,
) -> list[np.ndarray]:
    """log P(y_t | prompt, hint, y_<t) for every response token, one array per response (no gradient)."""
    rows = [
        Row(
            input_ids=[*p, *h, *y],
            loss_mask=[0] * (len(p) + len(h)) + [1] * len(y),
            old_logprobs=[0.0] * (len(p) + len(h) + len(y)),
            advantages=[0.0] * (len(p) + len(h) + len(y)),
            episode=k,
        )
        for k, (p, h, y) in enumerate(zip(prompts, hints, responses, strict=True))
    ]
    out: list[np.ndarray] = [np.zeros(0)] * len(rows)
    for micro in micro_batches(rows, token_budget):
        batch = collate(micro, pad_id)
        lp = token_logprobs(model, batch, autocast=autocast)[0]
        for i, row in enumerate(micro):
            out[row.episode] = lp[i][batch.mask[i] > 0].double().numpy()
    return out


TurnEdit = tuple[int, Callable[[np.ndarray], np.ndarray]]


def with_turn_edits(episodes: Sequence[Episode], adv: AdvantageOutput, edits: dict[int, TurnEdit]) -> AdvantageOutput:
    """`adv` as token advantages, episode i's turn t replaced by `f(its token advantages)` for `edits[i] = (t, f)`."""
    token = []
    for i, ep in enumerate(episodes):
        turns = []
        for t, turn in enumerate(ep.turns):
            n = len(turn.token_ids or []) if turn.prompt_token_ids is not None else 0
            base = adv.token_advantages(i, t, n) if n else np.zeros(0)
            if i in edits and edits[i][0] == t:
                base = edits[i][1](base)
            turns.append(base)
        token.append(turns)
    return replace(adv, token=token, metrics=dict(adv.metrics), loss_overrides=dict(adv.loss_overrides))


class OracleMixin:
    """The ground-truth answer of an episode's task, read from the rollout env (the trainer's oracle path)."""

    cfg: Any
    _oracle_env: Any = None

    def oracle_answer(self, ep: Episode) -> str:
        if self._oracle_env is None:
            from rlvr_gym.registry import make

            self._oracle_env = make(self.cfg.rollout.env, **self.cfg.rollout.env_kwargs)
        if ep.task_index is None:
            raise ValueError(f"episode {ep.episode_id} has no task_index: no ground truth to condition on")
        return str(self._oracle_env.get_task(int(ep.task_index)).ground_truth)

    def encode_hint(self, text: str) -> list[int]:
        return list(self.tokenizer(" " + text, add_special_tokens=False)["input_ids"])  # type: ignore[attr-defined]


class CepoTrainer(OracleMixin, Trainer):
    """The shared trainer with CEPO's contrastive token weights on the estimator's advantages."""

    settings_model = CepoSettings

    def update(self, episodes: Sequence[Episode], adv: AdvantageOutput) -> dict[str, float]:
        s: CepoSettings = self.settings  # type: ignore[assignment]
        lam = cepo_lambda(self.step, s.lam0, s.decay_steps)
        todo = [
            (i, t)
            for i, ep in enumerate(episodes)
            if adv.keep[i] and adv.episode[i] != 0 and (t := first_generated_turn(ep)) is not None
        ]
        if lam == 0 or not todo:
            return {**super().update(episodes, adv), "cepo/lambda": lam}
        negatives = negative_hints(episodes)
        prompts, pos, neg, resp = [], [], [], []
        for i, t in todo:
            ep, turn = episodes[i], episodes[i].turns[t]
            right = self.oracle_answer(ep)
            wrong = negatives[ep.group_id]
            prompts.append(list(turn.prompt_token_ids or []))
            resp.append(list(turn.token_ids or []))
            pos.append(self.encode_hint(right))
            neg.append(self.encode_hint(right if wrong is None else wrong))
        kw = {
            "pad_id": self.pad_id,
            "token_budget": self.cfg.micro_batch_tokens,
            "autocast": self.cfg.model.bf16_autocast,
        }
        self.model.eval()
        lp_pos = hinted_logprobs(self.model, prompts, pos, resp, **kw)
        lp_neg = hinted_logprobs(self.model, prompts, neg, resp, **kw)
        deltas = [a - b for a, b in zip(lp_pos, lp_neg, strict=True)]
        factors = [cepo_scale(d, float(adv.episode[i]), lam, s.eps_w) for (i, _), d in zip(todo, deltas, strict=True)]
        edits = {i: (t, partial(np.multiply, f)) for (i, t), f in zip(todo, factors, strict=True)}
        out = super().update(episodes, with_turn_edits(episodes, adv, edits))
        flat, factors_flat = np.concatenate(deltas), np.concatenate(factors)
        out.update(
            {
                "cepo/lambda": lam,
                "cepo/delta_abs_mean": float(np.abs(flat).mean()),
                "cepo/scale_std": float(factors_flat.std()),
                "cepo/episodes": float(len(todo)),
            }
        )
        return out
