"""Context distillation: the hinted response re-scored under the plain (hint-free) prompt.

For each hinted rollout i with response y_i and advantage A_i, a distillation row is [x0 ; y_i] where x0 is the
plain prompt rendered exactly as the agent renders a dropped rollout's prompt; only y_i's tokens are scored, the
response ids are the generated ones (never re-tokenised). The loss term is

    L_distill = - mean_i [ A_i * (1/|y_i|) sum_t log pi(y_i,t | x0, y_i,<t) ]

over the hinted rollouts of the minibatch, so behaviour that worked *with* the hint becomes likelier *without* it
(and behaviour that failed with it, less likely). Only the first turn is distilled (the method is single-turn).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from rlvr_gym.algorithms.advantages.base import AdvantageOutput
from rlvr_gym.algorithms.batch import Row
from rlvr_gym.types import Episode, Message

from .allocation import nudge_meta

PromptRenderer = Callable[[list[Message]], list[int]]


@dataclass
class DistillRow(Row):
    """A row scored by the distillation term (advantage = the row's constant weight A_i), never by the surrogate."""


def distill_rows(
    episodes: Sequence[Episode], adv: AdvantageOutput, render: PromptRenderer, max_len: int | None = None
) -> list[DistillRow]:
    """Rows [plain prompt ; first-turn response] of the kept, hinted episodes with a non-zero advantage."""
    rows: list[DistillRow] = []
    for i, ep in enumerate(episodes):
        meta = nudge_meta(ep)
        if meta.get("context_id") is None or not adv.keep[i] or ep.error is not None or not ep.turns:
            continue
        gen = list(ep.turns[0].token_ids or [])
        weight = float(adv.episode[i])
        if not gen or weight == 0.0:
            continue
        prompt = render([Message.model_validate(m) for m in meta["plain_prompt"]])
        row = DistillRow(episode=i)
        row.extend(prompt, generated=False)
        row.extend(gen, generated=True, logprobs=[0.0] * len(gen), advantages=[weight] * len(gen))
        if max_len is not None:
            for name in ("input_ids", "loss_mask", "old_logprobs", "advantages"):
                setattr(row, name, getattr(row, name)[:max_len])
        if row.n_generated:
            rows.append(row)
    return rows


def distill_loss(
    logprobs: torch.Tensor, mask: torch.Tensor, advantages: torch.Tensor, coef: float, normaliser: float
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """-coef * sum_rows(A_row * mean-token log-prob) / normaliser, tensors [rows, T] on predicted positions.

    `normaliser` = number of distillation rows in the whole minibatch, so micro-batch losses add up to the mean.
    Metrics are sums over the rows (the trainer reports them per row): mean-token log-prob and per-row loss.
    """
    mask = mask.to(logprobs.dtype)
    n_tok = mask.sum(-1).clamp(min=1.0)
    seq_logp = (logprobs * mask).sum(-1) / n_tok
    weight = (advantages * mask).sum(-1) / n_tok
    loss = -coef * (weight * seq_logp).sum() / max(normaliser, 1.0)
    return loss, {
        "distill_logp": seq_logp.detach().sum(),
        "distill_loss": loss.detach() * max(normaliser, 1.0),
    }
