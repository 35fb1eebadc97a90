"""Policy-gradient losses over padded token rows: PPO/GRPO clipped surrogate, KL to a reference, entropy.

Every tensor is [rows, T] and aligned with the *predicted* tokens; `mask` is 1 exactly on tokens the policy
generated, so prompt, env and tool tokens of a multi-turn row never receive gradient. Aggregation modes:
- `token_mean`: sum over all generated tokens / token count (DAPO; long responses weigh by length);
- `seq_mean_token_mean`: mean per row, then mean over rows (original GRPO);
- `seq_mean_token_sum_norm`: per-row sum / a constant `max_len`, then mean over rows (Dr.GRPO, length-unbiased).
With gradient accumulation the caller passes `normaliser` (tokens or rows of the whole minibatch) so the summed
micro-batch losses equal the loss of the minibatch in one piece.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch

Aggregation = Literal["token_mean", "seq_mean_token_mean", "seq_mean_token_sum_norm"]


@dataclass
class LossConfig:
    """Surrogate settings; `clip_high > clip_low` is DAPO clip-higher. `veto_eps` enables the Mu-GRPO veto."""

    clip_low: float = 0.2
    clip_high: float = 0.2
    aggregation: Aggregation = "token_mean"
    max_len: int = 512
    kl_coef: float = 0.0
    kl_estimator: Literal["k1", "k3"] = "k3"
    entropy_coef: float = 0.0
    veto_eps: float | None = None
    dual_clip: float | None = None  # lower bound on the loss of A<0 tokens with huge ratios (dual-clip PPO), e.g. 3.0


def aggregate(
    values: torch.Tensor, mask: torch.Tensor, mode: Aggregation, normaliser: float | None = None, max_len: int = 512
) -> torch.Tensor:
    """Reduce per-token values [rows, T] to a scalar according to `mode` (see the module docstring)."""
    masked = values * mask
    if mode == "token_mean":
        denom = normaliser if normaliser is not None else mask.sum().clamp(min=1.0)
        return masked.sum() / denom
    if mode == "seq_mean_token_mean":
        per_row = masked.sum(-1) / mask.sum(-1).clamp(min=1.0)
    elif mode == "seq_mean_token_sum_norm":
        per_row = masked.sum(-1) / float(max_len)
    else:
        raise ValueError(f"unknown aggregation {mode!r}")
    denom = normaliser if normaliser is not None else max(values.shape[0], 1)
    return per_row.sum() / denom


def kl_penalty(logprobs: torch.Tensor, ref_logprobs: torch.Tensor, estimator: str = "k3") -> torch.Tensor:
    """Per-token KL(pi || ref) estimate from sampled tokens: k1 = log r, k3 = exp(-log r) + log r - 1 (>= 0)."""
    log_ratio = logprobs - ref_logprobs
    if estimator == "k1":
        return log_ratio
    if estimator == "k3":
        neg = (-log_ratio).clamp(max=20.0)
        return torch.exp(neg) - neg - 1.0
    raise ValueError(f"unknown KL estimator {estimator!r}")


def veto_mask(log_ratio: torch.Tensor, mask: torch.Tensor, advantages: torch.Tensor, eps: float) -> torch.Tensor:
    """Mu-GRPO veto (INFERRED): in rows with A < 0, drop every token from the first whose ratio leaves [1-eps, 1+eps]."""
    ratio = torch.exp(log_ratio.detach())
    trigger = (mask > 0) & (advantages < 0) & ((ratio < 1 - eps) | (ratio > 1 + eps))
    after = torch.cumsum(trigger.to(torch.int32), dim=-1) > 0
    return mask * (~after).to(mask.dtype)


def policy_loss(
    logprobs: torch.Tensor,
    old_logprobs: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    cfg: LossConfig,
    *,
    ref_logprobs: torch.Tensor | None = None,
    entropy: torch.Tensor | None = None,
    normaliser: float | None = None,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Clipped surrogate (+ KL, - entropy bonus). Returns the loss and detached per-batch sums for metrics.

    Metric values are sums over generated tokens (key `tokens` holds the count) so the trainer can average them
    exactly over micro-batches.
    """
    mask = mask.to(logprobs.dtype)
    log_ratio = (logprobs - old_logprobs).clamp(-20.0, 20.0)
    if cfg.veto_eps is not None:
        mask = veto_mask(log_ratio, mask, advantages, cfg.veto_eps)
    ratio = torch.exp(log_ratio)
    unclipped = ratio * advantages
    clipped = torch.clamp(ratio, 1.0 - cfg.clip_low, 1.0 + cfg.clip_high) * advantages
    per_token = -torch.minimum(unclipped, clipped)
    if cfg.dual_clip is not None:
        per_token = torch.where(advantages < 0, torch.minimum(per_token, -cfg.dual_clip * advantages), per_token)
    loss = aggregate(per_token, mask, cfg.aggregation, normaliser, cfg.max_len)
    with torch.no_grad():
        is_clipped = ((ratio < 1.0 - cfg.clip_low) & (advantages < 0)) | (
            (ratio > 1.0 + cfg.clip_high) & (advantages > 0)
        )
        metrics = {
            "tokens": mask.sum(),
            "clip_frac": (is_clipped.to(mask.dtype) * mask).sum(),
            "ratio": (ratio * mask).sum(),
            "approx_kl_old": (0.5 * log_ratio.pow(2) * mask).sum(),
            "pg_loss": (per_token * mask).sum(),
        }
    if ref_logprobs is not None:
        kl = kl_penalty(logprobs, ref_logprobs, cfg.kl_estimator)
        if cfg.kl_coef:
            loss = loss + cfg.kl_coef * aggregate(kl, mask, cfg.aggregation, normaliser, cfg.max_len)
        metrics["kl_ref"] = (kl.detach() * mask).sum()
    if entropy is not None:
        if cfg.entropy_coef and entropy.requires_grad:
            loss = loss - cfg.entropy_coef * aggregate(entropy, mask, cfg.aggregation, normaliser, cfg.max_len)
        metrics["entropy"] = (entropy.detach() * mask).sum()
    return loss, metrics


def gather_logprobs(
    logits: torch.Tensor, targets: torch.Tensor, *, with_entropy: bool = False, entropy_grad: bool = False
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Log-prob of `targets` under `logits` (any leading shape, last dim = vocab) in fp32, plus optional entropy."""
    logits = logits.float()
    lse = torch.logsumexp(logits, dim=-1)
    logp = logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1) - lse
    ent = None
    if with_entropy:
        ctx = torch.enable_grad() if entropy_grad else torch.no_grad()
        with ctx:
            probs = torch.softmax(logits, dim=-1)
            ent = lse - (probs * logits).sum(-1)
    return logp, ent
