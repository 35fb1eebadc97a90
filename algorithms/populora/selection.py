"""The population step's plan: which members stay, which mutate in place, which are replaced and from whom.

Tiered schedule (METHODS.md 3.3): rank by fitness; the top `keep` fraction stays as is, the middle `mutate`
fraction is mutated in place, the bottom rest is replaced by a child of two tournament-selected parents (or a clone
of a random top-tier member when no crossover is configured), then mutated. A plan is data, so it can be logged
(which operator hit which member) and replayed; it depends only on fitness and the seeded `random.Random`.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Action:
    member: int
    kind: str  # "keep" | "mutate" | "replace"
    mutation: str | None = None
    crossover: str | None = None
    parents: tuple[int, ...] = field(default_factory=tuple)


def tournament(fitness: Sequence[float], rng: random.Random, size: int = 3, pool: Sequence[int] | None = None) -> int:
    """The fittest of `size` members drawn without replacement from `pool` (ties: the lower index)."""
    pool = list(pool if pool is not None else range(len(fitness)))
    drawn = rng.sample(pool, min(size, len(pool)))
    return max(sorted(drawn), key=lambda i: fitness[i])


def plan_generation(
    fitness: Sequence[float],
    rng: random.Random,
    *,
    keep: float = 0.3,
    mutate: float = 0.4,
    mutations: Sequence[str] = ("M1",),
    crossovers: Sequence[str] = (),
    tournament_size: int = 3,
) -> list[Action]:
    """One action per member (in member order). With one member there is nothing to select: it is mutated."""
    n = len(fitness)
    ranked = sorted(range(n), key=lambda i: (-fitness[i], i))
    n_keep = min(n, math.ceil(keep * n)) if n > 1 else 0
    n_mutate = min(n - n_keep, round(mutate * n)) if n > 1 else n
    top = ranked[: max(1, n_keep)]
    survivors = ranked[: n_keep + n_mutate]
    actions = {}
    for rank, member in enumerate(ranked):
        if rank < n_keep:
            actions[member] = Action(member, "keep")
        elif rank < n_keep + n_mutate:
            actions[member] = Action(member, "mutate", mutation=rng.choice(list(mutations)))
        elif crossovers and len(survivors) >= 2:
            first = tournament(fitness, rng, tournament_size, survivors)
            second = tournament(fitness, rng, tournament_size, [s for s in survivors if s != first])
            actions[member] = Action(
                member, "replace", rng.choice(list(mutations)), rng.choice(list(crossovers)), (first, second)
            )
        else:
            actions[member] = Action(member, "replace", rng.choice(list(mutations)), "clone", (rng.choice(top),))
    return [actions[i] for i in range(n)]
