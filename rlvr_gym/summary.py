"""Aggregate episode records into the numbers people compare: reward, pass rates, components, outcomes, errors.

Rewards and rates are over the episodes that have a reward (scored + invalid); infrastructure errors have none
and are counted apart (`error_count`, `errors` by kind), never averaged in as 0.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from .types import Episode, Outcome

GROUP_KEYS = ("depth", "difficulty", "family", "task_type", "category", "split")


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _std(values: Sequence[float]) -> float:
    if len(values) < 2:
        return 0.0
    mu = _mean(values)
    return math.sqrt(sum((v - mu) ** 2 for v in values) / (len(values) - 1))


def summarize(episodes: Sequence[Episode]) -> dict[str, Any]:
    """Means over rewarded episodes (scored + invalid); pass@G over groups; errors counted apart."""
    rewarded = [e for e in episodes if e.error is None]
    rewards = [e.reward for e in rewarded if e.reward is not None]
    groups: dict[str, list[Episode]] = defaultdict(list)
    for e in rewarded:
        groups[e.group_id].append(e)
    components: dict[str, list[float]] = defaultdict(list)
    for e in rewarded:
        if e.verdict is not None:
            for name, value in e.verdict.components.items():
                components[name].append(value)
    turns = [len(e.turns) for e in rewarded]
    invalid_turns = sum(1 for e in rewarded for t in e.turns if not t.valid_action)
    outcomes = Counter(e.outcome.value for e in episodes)
    errors = Counter(e.error.kind.value for e in episodes if e.error is not None)
    return {
        "episodes": len(episodes),
        "rewarded": len(rewarded),
        "groups": len(groups),
        "mean_reward": _mean(rewards),
        "std_reward": _std(rewards),
        "pass_rate": _mean([1.0 if e.passed else 0.0 for e in rewarded]),
        "pass_at_group": _mean([1.0 if any(e.passed for e in g) else 0.0 for g in groups.values()]),
        "components": {name: _mean(values) for name, values in sorted(components.items())},
        "mean_turns": _mean(turns),
        "invalid_action_rate": invalid_turns / max(1, sum(turns)),
        "outcomes": {o.value: outcomes.get(o.value, 0) for o in Outcome},
        "invalid_rate": outcomes.get(Outcome.INVALID.value, 0) / max(1, len(rewarded)),
        "error_count": sum(errors.values()),
        "errors": dict(sorted(errors.items())),
        "error_rate": sum(errors.values()) / max(1, len(episodes)),
    }


def summarize_by(episodes: Iterable[Episode], keys: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
    """Per-value summaries for metadata keys such as `depth` or `difficulty` (only keys that occur)."""
    episodes = list(episodes)
    keys = list(keys) if keys else [k for k in GROUP_KEYS if any(k in e.task_metadata for e in episodes)]
    out: dict[str, dict[str, Any]] = {}
    for key in keys:
        buckets: dict[str, list[Episode]] = defaultdict(list)
        for e in episodes:
            if key in e.task_metadata:
                buckets[str(e.task_metadata[key])].append(e)
        if buckets:
            out[key] = {value: summarize(group) for value, group in sorted(buckets.items())}
    return out
