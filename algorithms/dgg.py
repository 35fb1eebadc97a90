"""DGG: skip optimizer steps whose lm_head gradient surges while a rollout batch is reused (arXiv 2605.19425, no
public code; docs/algorithms-more.md).

Why: with several epochs over one rollout batch, training degrades when the lm_head weights suddenly change a lot;
the lm_head gradient norm lower-bounds the policy's divergence, so a surge is caught before the optimizer applies it.

INFERRED (design choices): g_k = ||grad of the lm_head weight|| at each optimizer step. First-epoch
steps (fresh data) update a running EMA mean m and EMA variance s² of g across training steps (decay `ema`,
default 0.9; s² <- ema s² + (1 - ema)(g - m_old)²) and are never blocked. A reuse step (epoch >= 2) is blocked when
g > m + z s (z = 3, once `warmup` = 3 first-epoch values were seen) or g > tau * g_first (tau = 2, g_first = mean g
of this batch's first epoch). A blocked step drops its gradient (no optimizer step), and every later step on the
same batch is blocked too ("stop reusing that batch"). With tied embeddings (SmolLM2) the weight's gradient also
holds the input-embedding part, as the tied parameter's gradient does in any trainer. With LoRA the lm_head is
frozen, so `DggTrainer` turns on its gradient during the update only (it is never in the optimizer or a checkpoint).

`DggTrainer` (algorithm name `dgg`) wraps its optimizer so the check needs no change to `Trainer`; the guard's state
lives in the trainer's `estimator_state`, so it is checkpointed and a resumed run continues it exactly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch
from pydantic import BaseModel, ConfigDict, Field

from rlvr_gym.types import Episode

from .advantages import AdvantageOutput
from .modeling import _causal_lm
from .trainer import Trainer

STATE_KEY = "dgg"


class DggSettings(BaseModel):
    """`algorithm: {name: dgg, ...}` keys."""

    model_config = ConfigDict(extra="forbid")

    z: float = Field(3.0, gt=0.0)
    tau: float = Field(2.0, gt=1.0)
    ema: float = Field(0.9, ge=0.0, lt=1.0)
    warmup: int = Field(3, ge=1)


class DggGuard:
    """The detector and policy, free of torch: feed it g per optimizer step, it says whether to apply the step.

    `state` is a plain dict (m, var, seen) so a trainer can checkpoint it."""

    def __init__(self, settings: DggSettings, steps_per_epoch: int, state: dict[str, float] | None = None) -> None:
        self.s = settings
        self.steps_per_epoch = max(1, steps_per_epoch)
        self.state = state if state is not None else {}
        self.state.setdefault("m", 0.0)
        self.state.setdefault("var", 0.0)
        self.state.setdefault("seen", 0)
        self.start_batch()

    def start_batch(self) -> None:
        self.k = 0
        self.first: list[float] = []
        self.stopped = False
        self.blocked = 0
        self.reason = ""

    def threshold(self) -> float:
        """The z-rule's bound m + z s, inf until `warmup` first-epoch values were seen."""
        if self.state["seen"] < self.s.warmup:
            return math.inf
        return self.state["m"] + self.s.z * math.sqrt(self.state["var"])

    def allow(self, g: float) -> bool:
        """Record update k's gradient norm g; True = apply the optimizer step."""
        first_epoch = self.k < self.steps_per_epoch
        self.k += 1
        if first_epoch:
            self.first.append(g)
            self._observe(g)
            return True
        if not self.stopped:
            g_first = sum(self.first) / len(self.first)
            if g > self.threshold():
                self.stopped, self.reason = True, "z"
            elif g > self.s.tau * g_first:
                self.stopped, self.reason = True, "tau"
        self.blocked += int(self.stopped)
        return not self.stopped

    def _observe(self, g: float) -> None:
        st, a = self.state, self.s.ema
        if st["seen"] == 0:
            st["m"], st["var"] = g, 0.0
        else:
            old = st["m"]
            st["m"] = a * old + (1 - a) * g
            st["var"] = a * st["var"] + (1 - a) * (g - old) ** 2
        st["seen"] += 1


def lm_head_weight(model: Any) -> torch.nn.Parameter:
    return _causal_lm(model).get_output_embeddings().weight


class _GuardedOptimizer:
    """Delegates to the real optimizer; `step` asks the guard first and drops the step (gradients zeroed) if told."""

    def __init__(self, inner: torch.optim.Optimizer, trainer: DggTrainer) -> None:
        self._inner, self._trainer = inner, trainer

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def step(self, closure: Any = None) -> Any:
        t = self._trainer
        head = lm_head_weight(t.model)
        g = float(head.grad.norm()) if head.grad is not None else 0.0
        t.dgg_norms.append(g)
        if not t.lm_head_trained:
            head.grad = None  # frozen under LoRA: its gradient was only measured
        if t.guard.allow(g):
            return self._inner.step(closure)
        self._inner.zero_grad(set_to_none=True)
        return None


class DggTrainer(Trainer):
    """The shared trainer with DGG's guard between each minibatch's backward and its optimizer step."""

    settings_model = DggSettings

    def __init__(self, cfg: Any, **kwargs: Any) -> None:
        super().__init__(cfg, **kwargs)
        self.lm_head_trained = any(lm_head_weight(self.model) is p for p in self.params)
        self.optimizer = _GuardedOptimizer(self.optimizer, self)  # type: ignore[assignment]
        self.dgg_norms: list[float] = []
        self.guard = DggGuard(self.settings, cfg.minibatches)  # type: ignore[arg-type]

    def update(self, episodes: Sequence[Episode], adv: AdvantageOutput) -> dict[str, float]:
        state = self.estimator_state.setdefault(STATE_KEY, {})
        self.guard = DggGuard(self.settings, self.cfg.minibatches, state)  # type: ignore[arg-type]
        self.dgg_norms = []
        head = lm_head_weight(self.model)
        head.requires_grad_(True)
        try:
            out = super().update(episodes, adv)
        finally:
            head.requires_grad_(self.lm_head_trained)
            if not self.lm_head_trained:
                head.grad = None
        out.update(
            {
                "dgg/blocked_steps": float(self.guard.blocked),
                "dgg/lm_head_grad_max": max(self.dgg_norms, default=0.0),
                "dgg/lm_head_grad_first": self.dgg_norms[0] if self.dgg_norms else 0.0,
                "dgg/threshold": self.guard.threshold() if self.guard.state["seen"] >= self.guard.s.warmup else 0.0,
            }
        )
        return out
