"""Belief metrics of a training step's episodes, logged whatever the estimator (ReBel, GRPO, GiGPO alike).

They say whether ReBel's machinery is switched on at all: the share of replies whose belief parses, the mean
belief-consistency reward the ReBel estimator would give (§1.2), and the share of rollout groups that belief grouping
splits into more than one step group (§1.3: with no parseable belief every step of a group falls in the one null
key, and the step term is only a baseline over the whole group). Logging them for the baselines too makes the
comparison fair: a baseline's beliefs are scored the same way, it is just not trained on them.
"""

from __future__ import annotations

import numpy as np

from rlvr_gym.envs.alfworld.belief import parse_output
from rlvr_gym.types import Episode

from .estimators import belief_trace


def belief_metrics(episodes: list[Episode], group_ids: list[str]) -> dict[str, float]:
    """Counts (`belief/steps`, `belief/groups`: for intervals), `belief/parse_rate`, `belief/format_rate`, `belief/reward_mean` (per step) and `belief/split_group_fraction`
    (per rollout group: more than one belief step key among its steps)."""
    steps = [turn for ep in episodes for turn in ep.turns]
    if not steps:
        return {}
    parsed = [parse_output(turn.action) for turn in steps]
    traces = [belief_trace(ep) for ep in episodes]
    keys: dict[str, set[str]] = {}
    for gid, trace in zip(group_ids, traces, strict=True):
        keys.setdefault(gid, set()).update(trace.keys)
    return {
        "belief/steps": float(len(steps)),
        "belief/groups": float(len(keys)),
        "belief/parse_rate": float(np.mean([p.belief is not None for p in parsed])),
        "belief/format_rate": float(np.mean([p.format_ok for p in parsed])),
        "belief/reward_mean": float(np.mean(np.concatenate([trace.intrinsic for trace in traces]))),
        "belief/split_group_fraction": float(np.mean([len(k) > 1 for k in keys.values()])),
    }
