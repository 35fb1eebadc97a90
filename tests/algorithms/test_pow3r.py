"""POW3R: contrast-adapted criterion weights by hand, and the MathAddition verifier's components as criteria."""

from __future__ import annotations

import numpy as np
import pytest

from rlvr_gym.algorithms.advantages import AdvantageInput
from rlvr_gym.algorithms.advantages.pow3r import contrast_weights, pow3r
from rlvr_gym.types import Episode, Verdict


def _eps(rows, passed=None):
    return [
        Episode(
            episode_id=f"e{i}",
            env_id="x",
            task_id="t",
            group_id="g",
            verdict=Verdict(reward=0.0, passed=bool(passed and passed[i]), components=c),
        )
        for i, c in enumerate(rows)
    ]


def test_weights_and_rewards_hand_values():
    """Criteria a, b in category X (h = 1, 1), c in category Y (h = 2), eta 0.1, three rollouts:
    a = [1, 1, 1] (saturated, std 0), b = [1, 0, 0] (std sqrt(2/9) = 0.471405), c = [0.5, 0.5, 1] (std 0.235702).
    raw = h (eta + std) = [0.1, 0.571405, 0.671405]; X renormalised to sum 2: w_a = 0.2/0.671405 = 0.297883,
    w_b = 1.702117; Y: w_c = 2. r = S w / 4 = [(0.297883 + 1.702117 + 1)/4, (0.297883 + 1)/4, (0.297883 + 2)/4]
    = [0.75, 0.324471, 0.574471] (human weights: [0.75, 0.5, 0.75]: b, the separating criterion, now counts more)."""
    s = np.array([[1, 1, 0.5], [1, 0, 0.5], [1, 0, 1.0]])
    w = contrast_weights(s, np.array([1.0, 1.0, 2.0]), ["X", "X", "Y"], eta=0.1)
    np.testing.assert_allclose(w, [0.297883, 1.702117, 2.0], atol=1e-6)
    rows = [dict(zip("abc", r, strict=True)) for r in s]
    inp = AdvantageInput.from_episodes(_eps(rows))
    out = pow3r(inp, weights={"a": 1, "b": 1, "c": 2}, categories={"a": "X", "b": "X", "c": "Y"})
    r = np.array([0.75, 0.324471, 0.574471])
    np.testing.assert_allclose(out.episode, (r - r.mean()) / (r.std(ddof=1) + 1e-6), atol=1e-5)


def test_no_contrast_keeps_human_weights_and_needs_components():
    """All criteria saturated: raw = h * eta, renormalised back to h exactly."""
    np.testing.assert_allclose(contrast_weights(np.ones((3, 2)), np.array([1.0, 3.0]), ["all", "all"]), [1, 3])
    with pytest.raises(ValueError):
        pow3r(AdvantageInput.from_rewards([[1.0, 0.0]]))


def test_math_verifier_components_as_criteria():
    """MathAddition's verdict components (format, value, form, correct) for 3 replies to one task: 'format' and
    'form' are met by all three (no contrast) while 'value'/'correct' separate them, so those two gain weight
    (weight shift > 0) and the correct reply keeps the highest advantage."""
    import rlvr_gym

    env = rlvr_gym.make("rlvr/MathAddition-v0")
    task = env.get_task(5)
    gold = int(task.ground_truth)
    verdicts = [env.score_answer(task, rf"\boxed{{{x}}}") for x in (gold, gold + 1, gold + 2)]
    eps = [
        Episode(episode_id=f"e{i}", env_id="m", task_id=task.id, group_id="g", verdict=v)
        for i, v in enumerate(verdicts)
    ]
    out = pow3r(AdvantageInput.from_episodes(eps))
    assert out.metrics["pow3r_weight_shift"] > 0
    assert out.episode[0] > 0 > out.episode[1] and out.episode[1] == pytest.approx(out.episode[2])
