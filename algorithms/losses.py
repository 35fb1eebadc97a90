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
    nfpo_n: int | None = None  # NFPO: each ratio times the next N-1 tokens' ratios (N = 1: PPO's gradient)
    nfpo_c_max: float = 2.0  # NFPO: clip of that forward-trace factor
    sage_guide: Literal["branch"] | None = None  # SAGE: KL anchor q * pi_ref with q from the token's entropy
    sage_alpha: float = 0.3
    sage_entropy_floor: float = 1.2
    sage_q_min: float = 0.6
    sage_q_max: float = 1.4


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


def forward_trace(log_ratio: torch.Tensor, mask: torch.Tensor, n: int, c_max: float = 2.0) -> torch.Tensor:
    """NFPO's detached factor c_t = prod of the ratios of the next n-1 generated tokens of the row, clipped to
    [0, c_max]: exp(S[min(k+n-1, last)] - S[k]), S = cumulative log-ratio over generated tokens, k = t's rank among
    them. Env/prompt tokens between turns are skipped (they are not actions); zeros off the mask."""
    if n < 1:
        raise ValueError(f"nfpo_n must be >= 1, got {n}")
    gen = mask > 0
    lr = torch.where(gen, log_ratio.detach(), torch.zeros_like(log_ratio))
    cum = torch.cumsum(lr, dim=-1)  # S at each position (constant over non-generated ones)
    rank = torch.cumsum(gen.to(torch.long), dim=-1) - 1
    last = gen.sum(-1, keepdim=True) - 1
    order = torch.argsort((~gen).to(torch.int8), dim=-1, stable=True)  # generated positions first, in order
    cum_by_rank = cum.gather(-1, order)
    end = torch.minimum(rank + (n - 1), last).clamp(min=0)
    c = torch.exp(cum_by_rank.gather(-1, end) - cum).clamp(0.0, c_max)
    return torch.where(gen, c, torch.zeros_like(c))


def sage_branch_guide(
    entropy: torch.Tensor, alpha: float = 0.3, floor: float = 1.2, q_min: float = 0.6, q_max: float = 1.4
) -> torch.Tensor:
    """SAGE's branch guide q_t = clamp(1 + alpha * ReLU(H_t - floor), q_min, q_max), H detached: at forks (high
    entropy) the reverse-KL anchor q * pi_ref gives the sampled token more room."""
    return (1.0 + alpha * torch.relu(entropy.detach() - floor)).clamp(q_min, q_max)


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
    if cfg.nfpo_n is not None:
        per_token, outside = _nfpo_surrogate(ratio, log_ratio, advantages, mask, cfg)
    else:
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
        if cfg.nfpo_n is not None:
            is_clipped = outside
        metrics = {
            "tokens": mask.sum(),
            "clip_frac": (is_clipped.to(mask.dtype) * mask).sum(),
            "ratio": (ratio * mask).sum(),
            "approx_kl_old": (0.5 * log_ratio.pow(2) * mask).sum(),
            "pg_loss": (per_token * mask).sum(),
        }
    if cfg.sage_guide is not None:
        if ref_logprobs is None or entropy is None:
            raise ValueError("sage needs reference log-probs (a LoRA model with kl_coef > 0 or log_kl) and entropies")
        guide = sage_branch_guide(entropy, cfg.sage_alpha, cfg.sage_entropy_floor, cfg.sage_q_min, cfg.sage_q_max)
        ref_logprobs = ref_logprobs + torch.log(guide)
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


def _nfpo_surrogate(
    ratio: torch.Tensor, log_ratio: torch.Tensor, advantages: torch.Tensor, mask: torch.Tensor, cfg: LossConfig
) -> tuple[torch.Tensor, torch.Tensor]:
    """NFPO (INFERRED, docs/algorithms-more.md): w = ratio * c (c detached), token masked where w left the trust
    region in A's direction; loss -M w A. With c = 1 its gradient is the clipped surrogate's, with ratio = 1 vanilla PG's."""
    w = ratio * forward_trace(log_ratio, mask, cfg.nfpo_n or 1, cfg.nfpo_c_max)
    outside = ((advantages > 0) & (w > 1.0 + cfg.clip_high)) | ((advantages < 0) & (w < 1.0 - cfg.clip_low))
    return -(~outside).to(w.dtype) * w * advantages, outside


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
