"""Aggregate episode records into the numbers people compare: reward, pass rates, components, outcomes, errors.

Rewards and rates are over the episodes that have a reward (scored + invalid); infrastructure errors have none
and are counted apart (`error_count`, `errors` by kind), never averaged in as 0.

Intervals are 95% two-sided, so a difference between two runs can be told from noise:

- `pass_rate_ci`: the Wilson score interval (`wilson_interval`); it stays inside [0, 1] and is sensible at
  rates of 0 or 1 and at small n, where the normal "p +- 1.96 * SE" interval collapses to a point.
- `mean_reward_ci`: the Student t interval on the mean (`mean_interval`); rewards need not be 0/1, and the
  eval sizes people run (8, 20, 100 episodes) are small enough for t and the normal quantile to differ by 20%.
  It is not clipped to the reward range: a wide interval outside it says "too few episodes".

Both are `null` where they are undefined (no rewarded episode; fewer than two for the t interval).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from statistics import NormalDist
from typing import Any

from .types import Episode, Outcome

GROUP_KEYS = ("depth", "difficulty", "family", "task_type", "category", "split")
Z95 = NormalDist().inv_cdf(0.975)  # 1.959964...
# Student t 0.975 quantiles for 1..30 degrees of freedom (standard tables, 4 decimals); beyond 30 a
# Cornish-Fisher expansion is within 1e-4 of them.
_T975 = (
    12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
    2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
    2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
)  # fmt: skip
Interval = list[float]  # [low, high]; a list so that summary.json round-trips to the same value


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _std(values: Sequence[float]) -> float:
    if len(values) < 2:
        return 0.0
    mu = _mean(values)
    return math.sqrt(sum((v - mu) ** 2 for v in values) / (len(values) - 1))


def t_quantile_975(df: int) -> float:
    """The 0.975 quantile of Student's t with `df` degrees of freedom (no scipy in the core install).

    Table for df <= 30, then Abramowitz & Stegun 26.7.5 (three terms): 2.0423 at df 30, 2.0003 at df 60.
    """
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    if df <= len(_T975):
        return _T975[df - 1]
    z = Z95
    return (
        z
        + (z**3 + z) / (4 * df)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
    )


def wilson_interval(successes: int, n: int, z: float = Z95) -> Interval | None:
    """The Wilson score interval for a pass rate of `successes` out of `n`; None when n is 0.

    center = (p + z^2/2n) / (1 + z^2/n),  half = z / (1 + z^2/n) * sqrt(p(1-p)/n + z^2/4n^2).
    Worked example, 8 of 10 passed: p = 0.8, z^2/n = 0.38415, center = 0.99207 / 1.38415 = 0.71674,
    half = 1.95996 * sqrt(0.016 + 0.0096037) / 1.38415 = 0.22658, so [0.4902, 0.9433].
    """
    if n <= 0:
        return None
    p = successes / n
    denominator = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denominator
    half = z / denominator * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return [max(0.0, round(center - half, 12)), min(1.0, round(center + half, 12))]  # 1.0, not 0.999...


def mean_interval(values: Sequence[float]) -> Interval | None:
    """The Student t interval of a mean, mean +- t(0.975, n-1) * s / sqrt(n); None for fewer than two values.

    Worked example, rewards [0.5, 0.7, 0.9]: mean 0.7, s = 0.2, s / sqrt(3) = 0.11547, t(0.975, 2) = 4.3027,
    half width 0.49683, so [0.2032, 1.1968].
    """
    if len(values) < 2:
        return None
    half = t_quantile_975(len(values) - 1) * _std(values) / math.sqrt(len(values))
    mu = _mean(values)
    return [mu - half, mu + half]


def _component_columns(rewarded: Sequence[Episode]) -> dict[str, tuple[float | None, ...]]:
    """Each component's value per rewarded episode (None where an episode's verdict lacks it)."""
    names = sorted({name for e in rewarded if e.verdict is not None for name in e.verdict.components})
    return {
        name: tuple(e.verdict.components.get(name) if e.verdict is not None else None for e in rewarded)
        for name in names
    }


def _component_groups(rewarded: Sequence[Episode]) -> tuple[list[list[str]], list[str]]:
    """Components that are equal on every episode, grouped; and those equal to the reward itself.

    Many families report a `correct` component that *is* the reward; printing it again, or twice under two
    names, says nothing new, so the printed summary shows each distinct column once and hides reward copies.
    """
    columns = _component_columns(rewarded)
    groups: dict[tuple[float | None, ...], list[str]] = defaultdict(list)
    for name, column in columns.items():
        groups[column].append(name)
    rewards = tuple(e.reward for e in rewarded)
    return list(groups.values()), groups.get(rewards, [])


def summarize(episodes: Sequence[Episode]) -> dict[str, Any]:
    """Means over rewarded episodes (scored + invalid); pass@G over groups; errors counted apart."""
    rewarded = [e for e in episodes if e.error is None]
    rewards = [e.reward for e in rewarded if e.reward is not None]
    groups: dict[str, list[Episode]] = defaultdict(list)
    for e in rewarded:
        groups[e.group_id].append(e)
    columns = _component_columns(rewarded)
    component_groups, same_as_reward = _component_groups(rewarded)
    turns = [len(e.turns) for e in rewarded]
    invalid_turns = sum(1 for e in rewarded for t in e.turns if not t.valid_action)
    outcomes = Counter(e.outcome.value for e in episodes)
    errors = Counter(e.error.kind.value for e in episodes if e.error is not None)
    passes = sum(1 for e in rewarded if e.passed)
    return {
        "episodes": len(episodes),
        "rewarded": len(rewarded),
        "groups": len(groups),
        "mean_reward": _mean(rewards),
        "mean_reward_ci": mean_interval(rewards),
        "std_reward": _std(rewards),
        "pass_count": passes,
        "pass_rate": passes / len(rewarded) if rewarded else 0.0,
        "pass_rate_ci": wilson_interval(passes, len(rewarded)),
        "pass_at_group": _mean([1.0 if any(e.passed for e in g) else 0.0 for g in groups.values()]),
        "components": {name: _mean([v for v in column if v is not None]) for name, column in columns.items()},
        "component_groups": component_groups,
        "components_same_as_reward": same_as_reward,
        "mean_turns": _mean(turns),
        "invalid_action_rate": invalid_turns / max(1, sum(turns)),
        "outcomes": {o.value: outcomes.get(o.value, 0) for o in Outcome},
        "invalid_rate": outcomes.get(Outcome.INVALID.value, 0) / max(1, len(rewarded)),
        "error_count": sum(errors.values()),
        "errors": dict(sorted(errors.items())),
        "error_rate": sum(errors.values()) / max(1, len(episodes)),
    }


def _natural(value: str) -> tuple[int, float, str]:
    """Sort key that puts "2" before "10" (difficulties, depths) and strings after numbers."""
    try:
        return (0, float(value), value)
    except ValueError:
        return (1, 0.0, value)


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
            out[key] = {value: summarize(buckets[value]) for value in sorted(buckets, key=_natural)}
    return out
