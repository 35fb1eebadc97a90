"""Context distillation: each response re-scored under the plain (hint-free) prompt x0.

Upstream (METHODS.md section 2, `NudgeRLTrainer._compute_loss`) adds, to the surrogate on the prompt each rollout saw,

    L_distill = - (1/B) sum_{i in minibatch} A_i * (1/|y_i|) sum_t log pi(y_i,t | x0, y_i,<t)

where the sum and B run over *every* row of the minibatch: a hinted rollout is scored under x0 (the hint removed),
a dropped one under its own prompt, which already is x0. So a hinted-only batch share f gives the distillation an
effective weight f * lambda_d. That is `over="minibatch"` (the default). `over="hinted"` is our earlier variant,
kept as a named option: hinted rows only, mean over them (an effective lambda_d larger by 1/f).

Worked example (the unit test's): one minibatch of three rows, lambda_d = 0.1; hinted A = 1.0 with token log-probs
under x0 (-1, -3) -> mean -2; hinted A = -0.5 with (-2) -> mean -2; dropped A = 2.0 with (-0.5, -1.5) -> mean -1.
minibatch: -0.1 * (1.0*-2 + -0.5*-2 + 2.0*-1) / 3 = 0.1; hinted: -0.1 * (1.0*-2 + -0.5*-2) / 2 = 0.05.

A distillation row is [x0 ; y_i]: x0 rendered exactly as the agent renders a dropped rollout's prompt (a dropped
rollout keeps its own prompt ids), y_i the generated ids (never re-tokenised); only y_i's tokens are scored. Rows
with A_i = 0 are left out, as the trainer leaves them out of the surrogate and its normaliser, so B counts the same
rows in both terms. The trainer passes B (the optimizer step's distillation rows) as `normaliser`. Only the first
turn is distilled (the method is single-turn).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import torch

from rlvr_gym.algorithms.advantages.base import AdvantageOutput
from rlvr_gym.algorithms.batch import Row
from rlvr_gym.types import Episode, Message

from .allocation import nudge_meta

PromptRenderer = Callable[[list[Message]], list[int]]
DistillOver = Literal["minibatch", "hinted"]


@dataclass
class DistillRow(Row):
    """A row scored by the distillation term (advantage = the row's constant weight A_i), never by the surrogate."""


def distill_rows(
    episodes: Sequence[Episode],
    adv: AdvantageOutput,
    render: PromptRenderer,
    max_len: int | None = None,
    over: DistillOver = "minibatch",
) -> list[DistillRow]:
    """Rows [x0 ; first-turn response] of the kept episodes with a non-zero advantage: every one (`minibatch`,
    upstream) or the hinted ones only (`hinted`)."""
    rows: list[DistillRow] = []
    for i, ep in enumerate(episodes):
        meta = nudge_meta(ep)
        hinted = meta.get("context_id") is not None
        if not meta or (over == "hinted" and not hinted) or not adv.keep[i] or ep.error is not None or not ep.turns:
            continue
        turn = ep.turns[0]
        gen, weight = list(turn.token_ids or []), float(adv.episode[i])
        if not gen or weight == 0.0:
            continue
        if hinted:
            prompt = render([Message.model_validate(m) for m in meta["plain_prompt"]])
        else:
            prompt = list(turn.prompt_token_ids or [])
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

    `normaliser` = B, the distillation rows of the whole minibatch, so micro-batch losses add up to the mean.
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
