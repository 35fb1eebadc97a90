"""Belief metrics logged for every estimator on ReBel-style runs: parse rate, belief reward, groups split."""

from __future__ import annotations

import pytest
from test_estimators import bad_episode, good_episode

from rlvr_gym.algorithms.rebel.estimators import belief_trace
from rlvr_gym.algorithms.rebel.metrics import belief_metrics


def test_belief_metrics_count_parses_and_split_groups():
    good, bad = good_episode(), bad_episode()
    unparsed = bad_episode().model_copy(
        update={"turns": [t.model_copy(update={"action": "go to fridge 1"}) for t in bad.turns]}
    )
    m = belief_metrics([good, bad, unparsed], ["g1", "g1", "g2"])
    steps = len(good.turns) + 2 * len(bad.turns)
    assert m["belief/steps"] == steps and m["belief/groups"] == 2
    assert m["belief/parse_rate"] == pytest.approx((len(good.turns) + 1) / steps)  # bad's 2nd belief is broken
    # g1's beliefs fall in more than one step key; g2 never parses, so every step shares the one null key
    assert m["belief/split_group_fraction"] == 0.5
    rewards = [r for ep in (good, bad, unparsed) for r in belief_trace(ep).intrinsic]
    assert m["belief/reward_mean"] == pytest.approx(sum(rewards) / len(rewards))


def test_no_episodes_no_metrics():
    assert belief_metrics([], []) == {}
