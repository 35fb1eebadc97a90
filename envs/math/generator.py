"""The procedural math task source: a validated config and per-index deterministic tasks.

Item i's family is drawn from `random.Random(f"{seed}:{i}")` and its content from an RNG seeded with
`f"{seed}:{i}:{family}:{difficulty}"`, so a task is rebuilt from its metadata alone and its id names it fully.
"""

from __future__ import annotations

import random
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rlvr_gym import Task

from .families import FAMILIES
from .numeric import format_number

FamilyName = Literal["arithmetic", "fractions", "linear", "modular", "combinatorics"]
INSTRUCTION = "Put your final answer in \\boxed{}."
SOURCE = "rlvr_gym.math.generator"


class MathGeneratorConfig(BaseModel):
    """Which families to mix (a list, or weights), how hard, which seed, and an optional fixed size."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    families: dict[FamilyName, float] = Field(default_factory=lambda: dict.fromkeys(FAMILIES, 1.0))
    difficulty: int = Field(2, ge=1, le=5)
    seed: int = 0
    size: int | None = Field(None, ge=1, description="Number of tasks; None = unbounded.")

    @field_validator("families", mode="before")
    @classmethod
    def _weights(cls, value):
        if isinstance(value, str):
            value = [value]
        if isinstance(value, list | tuple):
            value = dict.fromkeys(value, 1.0)
        return value

    @field_validator("families")
    @classmethod
    def _positive(cls, value: dict[str, float]) -> dict[str, float]:
        if not value or any(w < 0 for w in value.values()) or sum(value.values()) <= 0:
            raise ValueError("families needs at least one family with a positive weight")
        return value


def prompt_for(question: str) -> str:
    return f"{question}\n\n{INSTRUCTION}"


def reference_action(answer: str) -> str:
    return f"The final answer is \\boxed{{{answer}}}."


class MathGenerator:
    """Task i of a config, built on demand (unbounded generators hold no state)."""

    def __init__(self, config: MathGeneratorConfig | None = None) -> None:
        self.config = config or MathGeneratorConfig()
        names = sorted(name for name, weight in self.config.families.items() if weight > 0)
        self._names = names
        self._weights = [self.config.families[name] for name in names]

    def family_of(self, index: int) -> str:
        if len(self._names) == 1:
            return self._names[0]
        return random.Random(f"{self.config.seed}:{index}").choices(self._names, weights=self._weights)[0]

    def __len__(self) -> int:
        if self.config.size is None:
            raise TypeError("an unbounded generator has no length")
        return self.config.size

    def task(self, index: int) -> Task:
        if index < 0 or (self.config.size is not None and index >= self.config.size):
            raise IndexError(f"task index {index} out of range")
        return build_task(self.family_of(index), self.config.difficulty, self.config.seed, index)


def build_task(family: str, difficulty: int, seed: int, index: int) -> Task:
    """The task a generator with this seed builds at `index` for this family and difficulty."""
    rng = random.Random(f"{seed}:{index}:{family}:{difficulty}")
    question, value = FAMILIES[family](rng, difficulty)
    answer = format_number(value)
    return Task(
        id=f"math/{family}/d{difficulty}/s{seed}/{index}",
        prompt=prompt_for(question),
        ground_truth=answer,
        reference_actions=[reference_action(answer)],
        metadata={
            "source": SOURCE,
            "index": index,
            "seed": seed,
            "difficulty": difficulty,
            "family": family,
            "question": question,
        },
    )
