"""DelTA: discriminative token weights from a token-gradient proxy (github RUCBM/DelTA; docs/algorithms-more.md).

Why: a sequence-level advantage pushes every token of a response alike, although many tokens look the same in a
correct and in a wrong response. DelTA weighs each token by how clearly its gradient proxy sits on its own side.

[CODE] (from the source): v_t = (1 - p(y_t)) * h_t (h = hidden state entering lm_head, p = the sampling policy's
probability of the token); side centroids mu+ = sum A+ v / sum A+, mu- = sum |A-| v / sum |A-| over the batch's response
tokens; d± = ||v - mu±||²; margins m+ = d- - d+ on A > 0 tokens, m- = d+ - d- on A < 0 tokens; omega = sigmoid(m /
gamma), gamma = std of the margins of that side; K refinement passes re-estimate mu± with weights omega * |A|; c_t =
lambda_min + (lambda_max - lambda_min) * omega_t (A = 0 tokens: lambda_min), rescaled to token mean 1; A_t <- A * c_t.
[INFERRED] choices: gamma is the population std (ddof 0) floored at 1e-6; a batch without both signs has no contrast, so
every weight is 1 (plain update); zero-advantage rows never reach the batch here (`build_rows` skips them), so the token
mean is over the rows that are trained; tokens cut by `max_seq_len` keep weight 1 (they are not trained). The proxy is
computed once per step, before the updates, with the current (= behaviour) weights.

The weights need the model's hidden states, so DelTA is a `Trainer` subclass (`DeltaTrainer`, algorithm name
`delta`) over any estimator: it reweights the estimator's advantages token by token, then runs the usual update.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import torch
from pydantic import BaseModel, ConfigDict, Field, model_validator

from rlvr_gym.types import Episode

from .advantages import AdvantageOutput
from .batch import Row, build_rows, collate
from .losses import gather_logprobs
from .modeling import _causal_lm
from .trainer import Trainer

GAMMA_FLOOR = 1e-6


class DeltaSettings(BaseModel):
    """`algorithm: {name: delta, ...}` keys; defaults from the DelTA run script."""

    model_config = ConfigDict(extra="forbid")

    lambda_min: float = Field(0.8, ge=0.0)
    lambda_max: float = Field(1.2, ge=0.0)
    refine_iters: int = Field(1, ge=0)

    @model_validator(mode="after")
    def _ordered(self) -> DeltaSettings:
        if self.lambda_max < self.lambda_min:
            raise ValueError("delta: lambda_max must be >= lambda_min")
        return self


def _side_margins(v: torch.Tensor, adv: torch.Tensor, w_pos: torch.Tensor, w_neg: torch.Tensor) -> torch.Tensor:
    """Signed margin of every token toward its own side: d(other centroid) - d(own centroid)."""
    mu_pos = (w_pos[:, None] * v).sum(0) / w_pos.sum()
    mu_neg = (w_neg[:, None] * v).sum(0) / w_neg.sum()
    d_pos = (v - mu_pos).pow(2).sum(-1)
    d_neg = (v - mu_neg).pow(2).sum(-1)
    return torch.where(adv > 0, d_neg - d_pos, d_pos - d_neg)


def _soft_assignment(margin: torch.Tensor, side: torch.Tensor) -> torch.Tensor:
    """sigmoid(m / gamma) on one side's tokens, gamma = that side's margin std; zeros elsewhere."""
    omega = torch.zeros_like(margin)
    if side.any():
        gamma = margin[side].std(unbiased=False).clamp(min=GAMMA_FLOOR)
        omega[side] = torch.sigmoid(margin[side] / gamma)
    return omega


def delta_token_weights(
    v: torch.Tensor,
    adv: torch.Tensor,
    *,
    lambda_min: float = 0.8,
    lambda_max: float = 1.2,
    refine_iters: int = 1,
) -> torch.Tensor:
    """Token weights c [n] (token mean 1) from proxies v [n, D] and token advantages adv [n] (see module doc)."""
    v, adv = v.double(), adv.double()
    pos, neg = adv > 0, adv < 0
    if not (pos.any() and neg.any()):
        return torch.ones_like(adv)
    w_pos, w_neg = adv.clamp(min=0.0), (-adv).clamp(min=0.0)
    omega = torch.zeros_like(adv)
    for _ in range(refine_iters + 1):
        margin = _side_margins(v, adv, w_pos, w_neg)
        omega = _soft_assignment(margin, pos) + _soft_assignment(margin, neg)
        w_pos, w_neg = omega * pos * adv.abs(), omega * neg * adv.abs()
    c = lambda_min + (lambda_max - lambda_min) * omega  # A = 0 tokens have omega 0: lambda_min
    return c / c.mean()


@torch.no_grad()
def token_proxies(
    model: Any, rows: Sequence[Row], *, pad_id: int = 0, pad_multiple: int = 1, autocast: bool = False
) -> tuple[torch.Tensor, torch.Tensor, list[int]]:
    """v_t = (1 - p(y_t)) h_t and the token advantages at every generated position of `rows` (row-major), plus the
    number of positions per row. One no-grad forward of the decoder; the LM head only at generated positions."""
    lm = _causal_lm(model)
    batch = collate(list(rows), pad_id, pad_multiple)
    sel = batch.mask > 0
    ctx = torch.autocast("cpu", dtype=torch.bfloat16) if autocast else contextlib.nullcontext()
    with ctx:
        hidden = lm.get_decoder()(input_ids=batch.input_ids, attention_mask=batch.attention_mask).last_hidden_state
    h = hidden[:, :-1][sel].float()
    head = lm.get_output_embeddings()
    logits = torch.nn.functional.linear(h, head.weight.float(), None if head.bias is None else head.bias.float())
    logp, _ = gather_logprobs(logits, batch.targets[sel])
    v = (1.0 - logp.exp())[:, None] * h
    return v, batch.advantages[sel], [int(n) for n in sel.sum(-1)]


def reweighted_advantages(
    episodes: Sequence[Episode], adv: AdvantageOutput, rows: Sequence[Row], weights: Sequence[np.ndarray]
) -> AdvantageOutput:
    """`adv` as token advantages, multiplied by each row's generated-position weights (`weights[k]` for `rows[k]`).

    A row's generated positions are its episode's turns' tokens in order (`batch.episode_rows`), so the weights of
    an episode's rows, concatenated, line up with its turns' tokens; positions cut by `max_seq_len` keep weight 1."""
    per_episode: dict[int, list[np.ndarray]] = {}
    for row, w in zip(rows, weights, strict=True):
        per_episode.setdefault(row.episode, []).append(np.asarray(w, dtype=np.float64))
    token: list[list[np.ndarray]] = []
    for i, ep in enumerate(episodes):
        flat = np.concatenate(per_episode[i]) if i in per_episode else np.zeros(0)
        turns, k = [], 0
        for t, turn in enumerate(ep.turns):
            n = len(turn.token_ids or []) if turn.prompt_token_ids is not None else 0
            scale = np.ones(n)
            take = flat[k : k + n]
            scale[: len(take)] = take
            k += n
            base = adv.token_advantages(i, t, n) if n else np.zeros(0)
            turns.append(base * scale)
        token.append(turns)
    return replace(adv, token=token, metrics=dict(adv.metrics), loss_overrides=dict(adv.loss_overrides))


class DeltaTrainer(Trainer):
    """The shared trainer with DelTA's token weights applied to the estimator's advantages before each update."""

    settings_model = DeltaSettings

    def update(self, episodes: Sequence[Episode], adv: AdvantageOutput) -> dict[str, float]:
        rows = build_rows(episodes, adv, self.cfg.max_seq_len)
        if not rows:
            return super().update(episodes, adv)
        s: DeltaSettings = self.settings  # type: ignore[assignment]
        self.model.eval()
        fwd = {
            "pad_id": self.pad_id,
            "pad_multiple": self.cfg.pad_to_multiple,
            "autocast": self.cfg.model.bf16_autocast,
        }
        micros = self._micro(rows)
        parts = [token_proxies(self.model, micro, **fwd) for micro in micros]
        ordered = [r for micro in micros for r in micro]
        v = torch.cat([p[0] for p in parts])
        a = torch.cat([p[1] for p in parts])
        c = delta_token_weights(
            v, a, lambda_min=s.lambda_min, lambda_max=s.lambda_max, refine_iters=s.refine_iters
        ).numpy()
        counts = [n for p in parts for n in p[2]]
        split = np.split(c, np.cumsum(counts)[:-1])
        out = super().update(episodes, reweighted_advantages(episodes, adv, ordered, split))
        out.update(delta_metrics(c, a.numpy()))
        return out


def delta_metrics(c: np.ndarray, a: np.ndarray) -> dict[str, float]:
    """Spread of the step's token weights, and their mean on each advantage side."""
    out = {"delta/weight_std": float(c.std()), "delta/weight_min": float(c.min()), "delta/weight_max": float(c.max())}
    for name, side in (("pos", a > 0), ("neg", a < 0)):
        out[f"delta/weight_mean_{name}"] = float(c[side].mean()) if side.any() else 0.0
    return out
