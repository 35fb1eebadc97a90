"""NudgeRL settings: the keys under `algorithm:` when `algorithm.name: nudge` (checked when the config loads)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class NudgeSettings(BaseModel):
    """Allocation (M contexts x K rollouts, p_drop), distillation weight and where hints come from."""

    model_config = ConfigDict(extra="forbid")

    contexts_per_problem: int = Field(2, ge=1)  # M
    rollouts_per_context: int = Field(4, ge=1)  # K; a problem gets N = M * K rollouts (= rollout.group_size)
    p_drop: float = Field(0.5, ge=0.0, le=1.0)
    distill_coef: float = Field(0.1, ge=0.0)  # lambda_d
    distill_over: Literal["minibatch", "hinted"] = "minibatch"  # upstream: every row of the minibatch (distill.py)
    context_source: str = "builtin"  # builtin | stored | generated (see contexts.make_context_source)
    context_options: dict[str, Any] = Field(default_factory=dict)

    @property
    def rollouts_per_problem(self) -> int:
        return self.contexts_per_problem * self.rollouts_per_context
