"""NudgeRL run config: an ordinary train config plus a `nudge:` section (absent or `enabled: false` = plain GRPO)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rlvr_gym.algorithms.train_config import TrainConfig
from rlvr_gym.config import apply_overrides, load_yaml


class NudgeSettings(BaseModel):
    """Allocation (M contexts x K rollouts, p_drop), distillation weight, where hints come from, eval pass@k."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    contexts_per_problem: int = Field(2, ge=1)  # M
    rollouts_per_context: int = Field(4, ge=1)  # K; a problem gets N = M * K rollouts
    p_drop: float = Field(0.5, ge=0.0, le=1.0)
    distill_coef: float = Field(0.1, ge=0.0)  # lambda_d
    context_source: str = "builtin"  # builtin | stored | generated (see contexts.make_context_source)
    context_options: dict[str, Any] = Field(default_factory=dict)
    pass_at_k: int = Field(4, ge=0)  # eval samples per held-out task at the rollout temperature; 0 = off

    @property
    def rollouts_per_problem(self) -> int:
        return self.contexts_per_problem * self.rollouts_per_context


def load_nudge_config(
    source: str | Path | dict[str, Any], overrides: list[str] | None = None
) -> tuple[TrainConfig, NudgeSettings]:
    """Split a YAML/dict into the trainer's config and the nudge settings (`--set nudge.p_drop=0.3` works too)."""
    data = dict(source) if isinstance(source, dict) else load_yaml(source)
    if overrides:
        data = apply_overrides(data, overrides)
    raw = data.pop("nudge", None)
    nudge = NudgeSettings.model_validate(raw) if raw is not None else NudgeSettings(enabled=False)
    cfg = TrainConfig.model_validate(data)
    if nudge.enabled and cfg.estimator != "nudge":
        raise ValueError(f"nudge.enabled needs `estimator: nudge` (got {cfg.estimator!r})")
    return cfg, nudge
