"""AZR reward rules (Absolute Zero, arXiv 2505.03335): learnability 1 - s with no signal at s in {0, 1}; solver train scale."""

from __future__ import annotations

import pytest

from rlvr_gym.envs.azr.rewards import learnability, proposer_reward, solver_reward


@pytest.mark.parametrize(
    ("solved", "expected"),
    [
        ([], 0.0),
        ([0, 0, 0, 0], 0.0),
        ([1, 1, 1, 1], 0.0),
        ([1, 0, 0, 0], 0.75),
        ([1, 1, 1, 0], 0.25),
        ([True, False], 0.5),
    ],
)
def test_learnability_is_one_minus_solve_rate_and_zero_at_the_ends(solved, expected):
    assert learnability(solved) == pytest.approx(expected)


def test_proposer_reward_penalises_invalid_and_trivial_proposals():
    assert proposer_reward(False, [1, 0]) == -1.0
    assert proposer_reward(True, [1, 1, 1]) == -0.5
    assert proposer_reward(True, [0, 0, 0]) == -0.5
    assert proposer_reward(True, [1, 0, 0, 0]) == pytest.approx(0.75)


def test_solver_reward_scales():
    assert solver_reward(True, True) == 1.0
    assert solver_reward(True, False) == -0.5
    assert solver_reward(False, False) == -1.0
    assert solver_reward(True, True, train=False) == 1.0
    assert solver_reward(False, False, train=False) == 0.0
