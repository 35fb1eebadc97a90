"""Rubrics: named reward components with weights (the `verifiers` model).

A component is a function returning a float (usually in [0, 1]); the reward is the weighted sum, and weight-0
components are reported as metrics only. A rubric decides `passed` from one named component (or the reward).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .types import Verdict

ComponentFn = Callable[..., float]


@dataclass(frozen=True)
class Criterion:
    name: str
    fn: ComponentFn
    weight: float = 1.0


class Rubric:
    """Weighted sum of named components.

    `pass_on` names the component whose value must reach `pass_threshold` for `passed`; `None` uses the reward.
    Component functions are called with the keyword arguments given to `score`, so each takes what it needs.
    """

    def __init__(
        self,
        criteria: list[Criterion],
        *,
        pass_on: str | None = None,
        pass_threshold: float = 1.0,
    ) -> None:
        names = [c.name for c in criteria]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate rubric component names: {names}")
        if pass_on is not None and pass_on not in names:
            raise ValueError(f"pass_on={pass_on!r} is not a component ({names})")
        self.criteria = list(criteria)
        self.pass_on = pass_on
        self.pass_threshold = pass_threshold

    @property
    def weights(self) -> dict[str, float]:
        return {c.name: c.weight for c in self.criteria}

    def with_weights(self, weights: Mapping[str, float]) -> Rubric:
        """A copy with some weights replaced (configurable weights without subclassing)."""
        unknown = set(weights) - set(self.weights)
        if unknown:
            raise ValueError(f"unknown rubric components: {sorted(unknown)}")
        criteria = [Criterion(c.name, c.fn, weights.get(c.name, c.weight)) for c in self.criteria]
        return Rubric(criteria, pass_on=self.pass_on, pass_threshold=self.pass_threshold)

    def combine(self, components: Mapping[str, float], feedback: str | None = None) -> Verdict:
        """Build the verdict from already computed component values."""
        values = {name: float(components[name]) for name in self.weights}
        for name, value in values.items():
            if not math.isfinite(value):
                raise ValueError(f"component {name} is not finite: {value}")
        reward = math.fsum(self.weights[name] * value for name, value in values.items())
        gate = values[self.pass_on] if self.pass_on else reward
        return Verdict(
            reward=reward,
            passed=gate >= self.pass_threshold - 1e-12,
            components=values,
            feedback=feedback,
        )

    def score(self, feedback: str | None = None, **context: Any) -> Verdict:
        return self.combine({c.name: c.fn(**context) for c in self.criteria}, feedback=feedback)
