"""Pion: Muon-style orthogonalised updates with a high-pass Newton-Schulz polynomial, per attention head (arXiv
2605.19282; github OPTML-Group/Pion; docs/algorithms-more.md).

Why: Muon maps every singular value of the momentum to about 1, so in RLVR, where the gradient is mostly noise
with a few strong directions, it amplifies the noise as much as the signal (the paper sees Muon collapse). Pion's
iteration sigma -> 2.5 sigma^3 - 1.5 sigma^5 has stable fixed points 0 and 1 and an unstable one at sqrt(2/3): after
normalising by the Frobenius norm, strong directions (sigma > 0.816) go to 1 and weak ones are suppressed to 0.

[CODE] (from the source: `pion.py::high_pass_ns`, `muon.py::PerHeadPionAdamW`, `run_pion.sh`): momentum
m <- 0.95 m + 0.05 g (no Nesterov); X = m / ||m||_F in bf16, transposed so rows <= cols; k_p promotion steps
X <- 1.875 X - 1.25 (X X^T) X + 0.375 (X X^T)^2 X, then 5 - k_p suppression steps X <- 2.5 (X X^T) X - 1.5 (X X^T)^2 X;
W <- W (1 - lr wd) - lr * 5.0 * sqrt(max(rows, cols)) * X. RLVR setting: k_p = 0; q/k/v updated per head as
(heads, head_dim, in) (KV-head count for k/v), o_proj as (heads, out, head_dim), the scale taken from the head's
shape; FFN matrices whole; embeddings, lm_head and 1-D tensors by AdamW; one lr for all (1e-6 in the script).
[INFERRED]: the Frobenius norm is taken per head (each head is its own matrix, as its scale is); the AdamW part
uses the run's `optim` betas and weight decay; a 2-D tensor that is neither attention nor FFN (none in Llama) goes
to AdamW; full fine-tuning only (LoRA factors are not the per-head matrices the method is defined on).

`PionTrainer` (algorithm name `pion`) swaps the trainer's optimizer for `PionAdamW`; nothing else changes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch
from pydantic import BaseModel, ConfigDict, Field

from .modeling import _causal_lm
from .trainer import Trainer

PROMOTE = (1.875, -1.25, 0.375)  # sigma -> 1.875 sigma - 1.25 sigma^3 + 0.375 sigma^5 (pushes small sigma up)
SUPPRESS = (0.0, 2.5, -1.5)  # sigma -> 2.5 sigma^3 - 1.5 sigma^5 (0 and 1 stable, sqrt(2/3) the threshold)
FFN = ("gate_proj", "up_proj", "down_proj")
HEADS_IN = ("q_proj", "k_proj", "v_proj")


def high_pass_ns(g: torch.Tensor, k_p: int = 0, steps: int = 5, eps: float = 1e-7) -> torch.Tensor:
    """Pion's polynomial iteration on the last two dims of `g` (a matrix or a stack of per-head matrices)."""
    x = g.to(torch.bfloat16)
    x = x / (x.norm(dim=(-2, -1), keepdim=True) + eps)
    wide = x.shape[-2] > x.shape[-1]
    if wide:
        x = x.mT
    for i in range(steps):
        a, b, c = PROMOTE if i < k_p else SUPPRESS
        gram = x @ x.mT
        x = a * x + (b * gram + c * gram @ gram) @ x
    return (x.mT if wide else x).to(g.dtype)


def head_view(name: str, w: torch.Tensor, heads: int, kv_heads: int) -> torch.Tensor:
    """The per-head stack a projection is orthogonalised as; FFN matrices as one matrix (leading dim 1)."""
    if name.endswith(("q_proj.weight", "k_proj.weight", "v_proj.weight")):
        n = heads if "q_proj" in name else kv_heads
        return w.reshape(n, w.shape[0] // n, w.shape[1])
    if name.endswith("o_proj.weight"):
        return w.reshape(w.shape[0], heads, w.shape[1] // heads).permute(1, 0, 2)
    return w.unsqueeze(0)


def from_head_view(name: str, x: torch.Tensor, shape: torch.Size) -> torch.Tensor:
    if name.endswith("o_proj.weight"):
        return x.permute(1, 0, 2).reshape(shape)
    return x.reshape(shape)


def is_pion_param(name: str, p: torch.Tensor) -> bool:
    """Attention projections and FFN matrices: Pion; everything else (embeddings, lm_head, norms): AdamW."""
    proj = name.rsplit(".", 2)[-2] if name.endswith(".weight") else ""
    return p.ndim == 2 and proj in (*HEADS_IN, "o_proj", *FFN)


class PionAdamW(torch.optim.Optimizer):
    """Pion on the attention/FFN matrices, AdamW on the rest, as one optimizer (one state dict, one lr schedule).

    Groups carry `pion: bool`; Pion groups also carry `names` (to find each tensor's head layout)."""

    def __init__(
        self,
        named_params: Iterable[tuple[str, torch.nn.Parameter]],
        *,
        heads: int,
        kv_heads: int,
        lr: float,
        betas: tuple[float, float] = (0.9, 0.999),
        weight_decay: float = 0.0,
        momentum: float = 0.95,
        k_p: int = 0,
        ns_steps: int = 5,
        scale: float = 5.0,
        eps: float = 1e-8,
    ) -> None:
        named = [(n, p) for n, p in named_params if p.requires_grad]
        pion = [(n, p) for n, p in named if is_pion_param(n, p)]
        rest = [p for n, p in named if not is_pion_param(n, p)]
        groups: list[dict[str, Any]] = [
            {"params": [p for _, p in pion], "names": [n for n, _ in pion], "pion": True},
            {"params": rest, "names": [], "pion": False},
        ]
        defaults = dict(lr=lr, betas=betas, weight_decay=weight_decay, momentum=momentum, k_p=k_p, eps=eps)
        super().__init__([g for g in groups if g["params"]], defaults)
        self.heads, self.kv_heads, self.ns_steps, self.scale = heads, kv_heads, ns_steps, scale

    @torch.no_grad()
    def step(self, closure: Any = None) -> Any:
        loss = closure() if closure is not None else None
        for group in self.param_groups:
            if group["pion"]:
                self._pion(group)
            else:
                self._adamw(group)
        return loss

    def pion_direction(self, name: str, m: torch.Tensor, k_p: int) -> torch.Tensor:
        """The scaled update direction of one tensor's momentum: per head, 5.0 sqrt(max(rows, cols)) * high-pass(m)."""
        view = head_view(name, m, self.heads, self.kv_heads)
        x = high_pass_ns(view.float(), k_p, self.ns_steps)
        return from_head_view(name, x * self.scale * max(view.shape[-2:]) ** 0.5, m.shape)

    def _pion(self, group: dict[str, Any]) -> None:
        lr, wd, beta = group["lr"], group["weight_decay"], group["momentum"]
        for name, p in zip(group["names"], group["params"], strict=True):
            if p.grad is None:
                continue
            state = self.state[p]
            if "momentum" not in state:
                state["momentum"] = torch.zeros_like(p)
            m = state["momentum"]
            m.mul_(beta).add_(p.grad, alpha=1 - beta)
            p.mul_(1 - lr * wd).sub_(self.pion_direction(name, m, group["k_p"]).to(p.dtype), alpha=lr)

    def _adamw(self, group: dict[str, Any]) -> None:
        lr, wd, (b1, b2), eps = group["lr"], group["weight_decay"], group["betas"], group["eps"]
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p]
            if "step" not in state:
                state["step"], state["exp_avg"], state["exp_avg_sq"] = 0, torch.zeros_like(p), torch.zeros_like(p)
            state["step"] += 1
            t = state["step"]
            state["exp_avg"].mul_(b1).add_(p.grad, alpha=1 - b1)
            state["exp_avg_sq"].mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
            denom = (state["exp_avg_sq"] / (1 - b2**t)).sqrt_().add_(eps)
            p.mul_(1 - lr * wd).addcdiv_(state["exp_avg"], denom, value=-lr / (1 - b1**t))


class PionSettings(BaseModel):
    """`algorithm: {name: pion, ...}` keys (the learning rate is `optim.lr`, for both parts)."""

    model_config = ConfigDict(extra="forbid")

    momentum: float = Field(0.95, ge=0.0, lt=1.0)
    k_p: int = Field(0, ge=0, le=5)  # promotion steps (0 in the RLVR script)
    ns_steps: int = Field(5, ge=1)
    scale: float = Field(5.0, gt=0.0)


class PionTrainer(Trainer):
    """The shared trainer with `PionAdamW` as its optimizer (full fine-tuning)."""

    settings_model = PionSettings

    @classmethod
    def settings_from(cls, cfg: Any) -> BaseModel | None:
        if cfg.model.lora is not None:
            raise ValueError(
                "pion orthogonalises the per-head attention and FFN weight matrices: it needs full fine-tuning "
                "(model.lora: null); on LoRA factors it would be a different method"
            )
        return super().settings_from(cfg)

    def __init__(self, cfg: Any, **kwargs: Any) -> None:
        super().__init__(cfg, **kwargs)
        s: PionSettings = self.settings  # type: ignore[assignment]
        mc = _causal_lm(self.model).config
        o = cfg.optim
        self.optimizer = PionAdamW(
            self.model.named_parameters(),
            heads=mc.num_attention_heads,
            kv_heads=getattr(mc, "num_key_value_heads", None) or mc.num_attention_heads,
            lr=o.lr,
            betas=o.betas,
            weight_decay=o.weight_decay,
            momentum=s.momentum,
            k_p=s.k_p,
            ns_steps=s.ns_steps,
            scale=s.scale,
        )
