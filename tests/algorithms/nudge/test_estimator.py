"""The `nudge` estimator against hand-computed cases of NudgeRL's estimator (docs/nudge.md)."""

from __future__ import annotations

import numpy as np
import pytest

from rlvr_gym.algorithms.advantages import AdvantageInput, compute_advantages, get_estimator

EPS = 1e-5


def run(groups, contexts, **params):
    return compute_advantages("nudge", AdvantageInput.from_rewards(groups), context_ids=contexts, **params).episode


def zscore(raw):
    raw = np.asarray(raw, dtype=float)
    return (raw - raw.mean()) / (raw.std() + EPS)


def test_registered_as_entry_point():
    assert get_estimator("nudge").__module__.endswith("nudge.estimator")


def test_two_contexts_and_a_dropped_rollout():
    # rewards: ctx0 [1, 1], ctx1 [0, 1], dropped [0]; mu_bar = 0.6, mu_0 = 1, mu_1 = 0.5, lambda = 1.1
    # ctx0: 0 + 1.1*0.4 = 0.44 (x2); ctx1: -0.5 - 0.11 = -0.61, 0.5 - 0.11 = 0.39; dropped: 0 - 0.6 = -0.6
    got = run([[1, 1, 0, 1, 0]], [0, 0, 1, 1, None], adv_lambda=1.1)
    np.testing.assert_allclose(got, [0.848989, 0.848989, -1.233811, 0.749808, -1.213975], atol=1e-6)
    inp = AdvantageInput.from_rewards([[1, 1, 0, 1, 0]])
    metrics = compute_advantages("nudge", inp, context_ids=[0, 0, 1, 1, None]).metrics
    assert (metrics["nudge/context0_pass"], metrics["nudge/context1_pass"], metrics["nudge/plain_pass"]) == (1, 0.5, 0)


def test_inter_term_alone_separates_constant_contexts():
    # ctx0 [1, 1], ctx1 [0, 0]: intra terms vanish, inter = +-1.1*0.5 = +-0.55, standardised to +-0.55/(0.55+eps)
    got = run([[1, 1, 0, 0]], [0, 0, 1, 1], adv_lambda=1.1)
    np.testing.assert_allclose(got, [0.55 / (0.55 + EPS)] * 2 + [-0.55 / (0.55 + EPS)] * 2, rtol=1e-9)


def test_all_dropped_is_grpo_with_population_std():
    got = run([[1, 0, 0, 1]], [None] * 4)
    np.testing.assert_allclose(got, [0.5 / (0.5 + EPS), -0.5 / (0.5 + EPS), -0.5 / (0.5 + EPS), 0.5 / (0.5 + EPS)])


def test_single_context_equals_plain_centering():
    # one context, nothing dropped: mu_c = mu_bar, so A = r - mu_bar whatever lambda is
    rewards = [1.0, 0.0, 0.0, 0.0]
    np.testing.assert_allclose(run([rewards], [0] * 4, adv_lambda=3.0), zscore([0.75, -0.25, -0.25, -0.25]))


def test_lambda_one_collapses_to_grpo():
    rewards = [1, 0, 1, 1, 0, 0]
    contexts = [0, 0, 1, None, 1, None]
    np.testing.assert_allclose(run([rewards], contexts, adv_lambda=1.0), zscore(np.array(rewards) - 0.5))


@pytest.mark.parametrize("rewards", [[1, 1, 1, 1], [0, 0, 0, 0], [0.3]])
def test_degenerate_groups_give_zero(rewards):
    contexts = [0, 1, None, 1][: len(rewards)]
    assert np.all(run([rewards], contexts) == 0.0)


def test_problems_are_standardised_independently():
    got = run([[1, 0], [1, 1, 0, 1]], [0, 0, 0, 1, None, None], adv_lambda=1.1)
    np.testing.assert_allclose(got[:2], zscore([0.5, -0.5]))
    # second problem: ctx0 [1], ctx1 [1], dropped [0, 1]; mu_bar = 0.75 -> 0.275, 0.275, -0.75, 0.25
    np.testing.assert_allclose(got[2:], zscore([0.275, 0.275, -0.75, 0.25]), atol=1e-12)


def test_context_ids_must_align():
    with pytest.raises(ValueError):
        run([[1, 0]], [0])
