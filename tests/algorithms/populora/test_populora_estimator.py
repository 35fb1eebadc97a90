"""Task-relative REINFORCE++ against hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest

from rlvr_gym.algorithms.advantages import AdvantageInput, compute_advantages, get_estimator, list_estimators


def _input(rewards, keys):
    return AdvantageInput(
        episodes=[], group_ids=[f"e{i}" for i in range(len(rewards))], rewards=np.array(rewards), task_keys=keys
    )


def test_registered_through_the_entry_point():
    assert "task_relative_reinforce_pp" in list_estimators()
    assert get_estimator("task_relative_reinforce_pp").__module__.endswith("populora.estimator")


def test_each_task_role_batch_is_whitened_on_its_own():
    # solve:deduction rewards 1, -0.5, -0.5 -> mean 0, sample std sqrt((1 + .25 + .25) / 2) = sqrt(0.75)
    # propose:deduction rewards 0.75, 0.25 -> mean 0.5, sample std sqrt((.0625 + .0625) / 1) = 0.35355...
    rewards = [1.0, 0.75, -0.5, 0.25, -0.5]
    keys = ["solve:deduction", "propose:deduction", "solve:deduction", "propose:deduction", "solve:deduction"]
    out = compute_advantages("task_relative_reinforce_pp", _input(rewards, keys), eps=0.0)
    s = np.sqrt(0.75)
    expected = [1.0 / s, 0.25 / 0.3535533905932738, -0.5 / s, -0.25 / 0.3535533905932738, -0.5 / s]
    np.testing.assert_allclose(out.episode, expected, rtol=1e-12)
    assert out.metrics["populora/task_batches"] == 2.0


def test_one_global_whitening_would_differ():
    rewards, keys = [1.0, 0.0, 10.0, 20.0], ["a", "a", "b", "b"]
    out = compute_advantages("task_relative_reinforce_pp", _input(rewards, keys), eps=0.0)
    h = np.sqrt(0.5)  # (1 - 0.5) / std([1, 0]) and (20 - 15) / std([10, 20]): each batch on its own scale
    np.testing.assert_allclose(out.episode, [h, -h, -h, h], rtol=1e-12)


def test_singleton_and_constant_batches_get_zero():
    out = compute_advantages("task_relative_reinforce_pp", _input([1.0, 0.5, 0.5, 7.0], ["a", "b", "b", "c"]))
    np.testing.assert_allclose(out.episode, [0.0, 0.0, 0.0, 0.0])


def test_key_count_must_match():
    with pytest.raises(ValueError):
        compute_advantages("task_relative_reinforce_pp", _input([1.0, 0.0], ["a"]))
