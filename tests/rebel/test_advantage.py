"""ReBel and GiGPO advantages on hand-computed trajectories, and the belief grouping keys."""

from __future__ import annotations

import numpy as np
import pytest

from rlvr_gym.algorithms.rebel.advantage import (
    discounted_returns,
    gigpo_advantage,
    keyed_normalise,
    per_task_normalise,
    rebel_advantage,
)
from rlvr_gym.algorithms.rebel.grouping import NULL_KEY, anchor_clusters, belief_step_key
from rlvr_gym.envs.alfworld.belief import Belief


def test_discounted_returns():
    assert discounted_returns([1.0, 0.0, 2.0], 0.5) == pytest.approx([1.5, 1.0, 2.0])


def test_keyed_normalise_singletons_get_zero():
    out = keyed_normalise(np.array([1.0, 3.0, 7.0]), ["a", "a", "b"])
    assert out == pytest.approx([-1.0, 1.0, 0.0])


def test_rebel_advantage_hand_computed():
    # one task group, two episodes; A succeeds (R_g = 10), B fails; they share only their first step's key
    a_ep, turns = rebel_advantage(
        ["g", "g"], [10.0, 0.0], [[0.2, 0.4], [0.1, 0.1]], [["k1", "k2"], ["k1", "k3"]], gamma=0.5, step_weight=0.5
    )
    assert a_ep == pytest.approx([5.0, -5.0])
    # R_env: A [5, 10], B [0, 0]; R_belief: A [0.4, 0.4], B [0.15, 0.1]
    # group k1: env ±2.5, belief ±0.125 -> A_step ±2.625; k2, k3 singletons -> 0
    assert turns[0] == pytest.approx([5.0 + 0.5 * 2.625, 5.0])
    assert turns[1] == pytest.approx([-5.0 - 0.5 * 2.625, -5.0])


def test_rebel_groups_never_cross_task_groups():
    _, turns = rebel_advantage(["g1", "g2"], [10.0, 0.0], [[0.0], [0.0]], [["k"], ["k"]], gamma=1.0)
    assert turns[0] == pytest.approx([0.0]) and turns[1] == pytest.approx([0.0])


def test_gigpo_advantage_hand_computed():
    a_ep, turns = gigpo_advantage(
        ["g", "g"],
        [1.0, 0.0],
        [[0.0, 1.0], [0.0, 0.0, 0.0]],
        [["s0", "s1"], ["s0", "s2", "s1"]],
        gamma=0.5,
        step_weight=1.0,
    )
    # episode term across step rows: mean = (2·1 + 3·0)/5 = 0.4
    assert a_ep == pytest.approx([0.6, -0.4])
    # returns A [0.5, 1], B [0, 0, 0]; s0: ±0.25, s1: ±0.5, s2 singleton
    assert turns[0] == pytest.approx([0.85, 1.1])
    assert turns[1] == pytest.approx([-0.65, -0.4, -0.9])


def test_gigpo_similarity_clustering():
    assert anchor_clusters(["a b c", "a b c", "x"]) == [0, 0, 1]
    assert anchor_clusters(["kitchen apple 1", "kitchen apple 2", "zzz"], similarity=0.9) == [0, 0, 1]


def test_per_task_normalise_branches():
    values = np.array([1.0, 2.0, 3.0, 4.0] + [0.0] * 10 + list(np.linspace(-3, 3, 12)))
    tasks = ["a"] * 4 + ["b"] * 10 + ["c"] * 12
    out = per_task_normalise(values, tasks)
    g_mean, g_std = values.mean(), values.std()
    t_mean, t_std = 2.5, np.std([1.0, 2.0, 3.0, 4.0])
    blend = 0.4
    mean, std = blend * t_mean + (1 - blend) * g_mean, blend * t_std + (1 - blend) * g_std
    assert out[:4] == pytest.approx((values[:4] - mean) / (std + 1e-6))  # < 10 rows: blended z-score
    assert out[4:14] == pytest.approx(np.zeros(10))  # std < 0.2: mean subtraction only
    c = values[14:]
    assert out[14:] == pytest.approx((c - c.mean()) / (c.std() + 1e-6))  # z-score


def test_belief_step_key():
    b1 = Belief(objects={"apple 1": "in_hand"}, phase="pickup", target="the Apple 1")
    b2 = Belief(objects={"apple 1": "in_hand", "egg 1": "fridge 1"}, phase="place", target="apple 1", subgoal="x")
    # gt_phase granularity ignores the belief's own phase/subgoal and extra objects; articles are stripped
    assert belief_step_key(b1, "place") == belief_step_key(b2, "place")
    assert belief_step_key(b1, "place") != belief_step_key(b1, "find")
    assert belief_step_key(Belief(target="apple 2"), "find") != belief_step_key(Belief(target="apple 1"), "find")
    assert belief_step_key(b1, "place", "subgoal") != belief_step_key(b2, "place", "subgoal")
    assert belief_step_key(None, "find") == NULL_KEY
    with pytest.raises(ValueError):
        belief_step_key(b1, "find", "bogus")
