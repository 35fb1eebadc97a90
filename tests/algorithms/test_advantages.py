"""Hand-computed cases for every advantage estimator, plus degenerate groups (all equal, singleton, NaN-free)."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import numpy as np
import pytest

from rlvr_gym.algorithms.advantages import AdvantageInput, compute_advantages, get_estimator, list_estimators
from rlvr_gym.algorithms.advantages.base import AdvantageOutput, last_boxed, register_estimator
from rlvr_gym.types import Episode, Turn

BUILTIN = ["grpo", "dr_grpo", "rloo", "dapo", "lampo", "edas", "avspo", "tmn", "mu_grpo"]


def adv(name: str, groups, **kw) -> AdvantageOutput:
    params = kw.pop("params", {})
    return get_estimator(name)(AdvantageInput.from_rewards(groups, **kw), **params)


def test_registry_lists_builtins_and_rejects_duplicates():
    assert set(BUILTIN) <= set(list_estimators())
    with pytest.raises(KeyError):
        get_estimator("no-such-estimator")
    with pytest.raises(ValueError):
        register_estimator("grpo")(lambda inp: AdvantageOutput(episode=inp.rewards))
    assert {"rebel", "gigpo"} <= set(list_estimators())


def test_estimators_are_entry_point_plugins(tmp_path):
    """One file plus one entry-point line makes a new estimator; listing names imports no estimator module."""
    (tmp_path / "my_estimator.py").write_text(
        "from rlvr_gym.algorithms.advantages.base import AdvantageOutput\n"
        "def doubled(inp):\n    return AdvantageOutput(episode=2 * inp.rewards)\n"
    )
    dist = tmp_path / "my_estimator-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: my-estimator\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[rlvr_gym.estimators]\ndoubled = my_estimator:doubled\n")
    code = (
        "import sys\n"
        "from rlvr_gym.algorithms.advantages import AdvantageInput, get_estimator, list_estimators\n"
        "names = list_estimators()\n"
        "assert 'doubled' in names and 'grpo' in names, names\n"
        "loaded = [m for m in sys.modules if m.startswith('rlvr_gym.algorithms.advantages.') and m[31:] != 'base']\n"
        "assert not loaded, loaded\n"
        "out = get_estimator('doubled')(AdvantageInput.from_rewards([[1.0, 0.0]]))\n"
        "assert out.episode.tolist() == [2.0, 0.0]\n"
        "assert get_estimator('rebel').__module__ == 'rlvr_gym.algorithms.rebel.estimators'\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=120)


def test_grpo_zscore_and_dr_grpo():
    out = adv("grpo", [[1, 0, 0, 0]])
    np.testing.assert_allclose(out.episode, [1.5, -0.5, -0.5, -0.5], atol=1e-5)  # mean .25, unbiased std .5
    np.testing.assert_allclose(
        adv("grpo", [[1, 0, 0, 0]], params={"scale_std": False}).episode, [0.75, -0.25, -0.25, -0.25]
    )
    np.testing.assert_allclose(adv("dr_grpo", [[2, 0]]).episode, [1.0, -1.0])


def test_rloo_leave_one_out():
    np.testing.assert_allclose(adv("rloo", [[1, 0, 0, 0]]).episode, [1.0, -1 / 3, -1 / 3, -1 / 3])
    np.testing.assert_allclose(adv("rloo", [[3, 1]]).episode, [2.0, -2.0])


def test_dapo_drops_and_reports_collapsed_groups():
    out = adv("dapo", [[1, 0], [1, 1], [0]])
    assert out.keep.tolist() == [True, True, False, False, False]
    np.testing.assert_allclose(out.episode, [math.sqrt(0.5), -math.sqrt(0.5), 0, 0, 0], atol=1e-5)
    assert out.metrics["dropped_groups"] == 2 and out.metrics["dropped_fraction"] == pytest.approx(2 / 3)
    assert out.loss_overrides["clip_high"] == 0.28


def test_lampo_confidence_weights():
    sig = lambda x: 1 / (1 + math.exp(-x))  # noqa: E731
    # model already more confident in the better answer -> down-weighted pair
    out = adv("lampo", [[1, 0]], seq_logprobs=np.array([-1.0, -2.0]))
    np.testing.assert_allclose(out.episode, [2 * sig(-1), -2 * sig(-1)])
    # more confident in the worse answer -> up-weighted pair
    out = adv("lampo", [[1, 0]], seq_logprobs=np.array([-2.0, -1.0]))
    np.testing.assert_allclose(out.episode, [2 * sig(1), -2 * sig(1)])
    # beta = 0 reduces to RLOO
    np.testing.assert_allclose(
        adv("lampo", [[1, 0, 0]], seq_logprobs=np.array([-1.0, -3.0, -0.2]), params={"beta": 0.0}).episode,
        [1.0, -0.5, -0.5],
    )


def test_edas_scales_wrong_answers_by_frequency():
    out = adv("edas", [[1, 0, 0, 0]], answers=["4", "5", " 5", "7"], correct=np.array([True, False, False, False]))
    # GRPO [1.5, -.5, -.5, -.5]; wrong freqs [2/3, 2/3, 1/3], mean 5/9 -> scales [1.2, 1.2, 0.6]
    np.testing.assert_allclose(out.episode, [1.5, -0.6, -0.6, -0.3], atol=1e-5)
    clipped = adv(
        "edas",
        [[1, 0, 0, 0, 0]],
        answers=["1", "2", "2", "2", "3"],
        correct=np.array([True, False, False, False, False]),
        params={"lo": 0.5, "hi": 1.2},
    )
    base = adv("grpo", [[1, 0, 0, 0, 0]]).episode
    # freqs [3/4,3/4,3/4,1/4], mean 10/16 -> [1.2,1.2,1.2,0.4->0.5]
    np.testing.assert_allclose(clipped.episode, base * np.array([1, 1.2, 1.2, 1.2, 0.5]), atol=1e-6)


def test_avspo_virtual_samples_only_in_statistics():
    state: dict = {}
    out = adv("avspo", [[1, 1, 1, 1], [1, 0, 0, 0]], state=state)
    # ACR = .5 -> k = ceil(.5 * 4) = 2 virtual zeros: pooled [1,1,1,1,0,0], mean 2/3, unbiased var 4/15
    np.testing.assert_allclose(out.episode[:4], (1 / 3) / math.sqrt(4 / 15), atol=1e-5)
    np.testing.assert_allclose(out.episode[4:], [1.5, -0.5, -0.5, -0.5], atol=1e-5)
    assert state["avspo_acr_ema"] == 0.5 and out.metrics["avspo_virtual_samples"] == 2
    adv("avspo", [[0, 0], [0, 1]], state=state, params={"ema": 0.5})  # ACR 0.5 again
    assert state["avspo_acr_ema"] == pytest.approx(0.5)
    adv("avspo", [[0, 1]], state=state, params={"ema": 0.5})
    assert state["avspo_acr_ema"] == pytest.approx(0.25)
    out = adv("avspo", [[0, 0, 0, 0]])  # all wrong -> negative push
    assert np.all(out.episode < 0)


def test_tmn_task_scale_and_difficulty_weights():
    groups = [[1, 0], [1, 1, 1, 0]]
    scale = math.sqrt((0.5 + 0.25) / 2)
    out = adv("tmn", groups, params={"reweight": False})
    np.testing.assert_allclose(out.episode, np.array([0.5, -0.5, 0.25, 0.25, 0.25, -0.75]) / scale, atol=1e-5)
    out = adv("tmn", groups)  # alpha .5, gamma 1: group A p=.5 -> x1; group B p=.75 -> x e^-.25 / x e^.25
    b = np.array([0.25 * math.exp(-0.25)] * 3 + [-0.75 * math.exp(0.25)]) / scale
    np.testing.assert_allclose(out.episode, np.concatenate([[0.5 / scale, -0.5 / scale], b]), atol=1e-5)
    # separate task keys normalise separately; singleton: mu 0, var 1 (source convention), smoothed = task mean
    out = adv("tmn", [[1, 0], [1]], task_keys=["a", "a", "b"])
    np.testing.assert_allclose(out.episode, [0.5 / math.sqrt(0.5), -0.5 / math.sqrt(0.5), math.exp(0.5)], atol=1e-5)


def test_mu_grpo_overrides_and_veto():
    out = adv("mu_grpo", [[1, 0]])
    assert out.loss_overrides == {"veto_eps": 0.2, "clip_low": 0.2, "clip_high": 0.4}


@pytest.mark.parametrize("name", BUILTIN)
@pytest.mark.parametrize("groups", [[[1, 1, 1]], [[0.0]], [[0.5, 0.5], [1.0]], [[0, 0, 0, 0], [1, 1, 1, 1]]])
def test_degenerate_groups_are_finite(name, groups):
    out = compute_advantages(name, AdvantageInput.from_rewards(groups))
    assert np.all(np.isfinite(out.episode))
    assert 0.0 <= out.metrics["acr"] <= 1.0
    if name not in ("avspo", "tmn"):  # these two give collapsed / singleton groups a signal by design
        np.testing.assert_allclose(out.episode, 0.0)


def test_acr_metric_and_token_broadcast():
    out = compute_advantages("grpo", AdvantageInput.from_rewards([[1, 1], [1, 0], [0]]))
    assert out.metrics["acr"] == pytest.approx(2 / 3)
    assert out.token_advantages(4, 0, 3).tolist() == [0.0, 0.0, 0.0]
    out.turn = [np.array([1.0, 2.0])] * 5
    assert out.token_advantages(0, 1, 2).tolist() == [2.0, 2.0]


def test_last_boxed_nested():
    assert last_boxed(r"so \boxed{1} no \boxed{\frac{1}{2}} end") == r"\frac{1}{2}"
    assert last_boxed("none") is None


def sized(group: str, reward: float, n_tokens: int) -> Episode:
    turn = Turn(index=0, observation=[], action="", token_ids=[1] * n_tokens)
    return Episode(episode_id="e", env_id="x", task_id=group, group_id=group, total_reward=reward, turns=[turn])


def test_dapo_overlong_shaping_by_hand():
    """Budget 32, buffer 8: no penalty up to 24 tokens, then -(L - 24)/8, i.e. -0.25 at 26, -0.75 at 30, -1 at 32."""
    eps = [
        sized("a", 1, 20),
        sized("a", 1, 26),
        sized("a", 0, 32),
        sized("a", 1, 30),
        sized("b", 1, 20),
        sized("b", 1, 30),
    ]
    inp = AdvantageInput.from_episodes(eps)
    out = get_estimator("dapo")(inp, overlong_buffer=8, max_response_tokens=32)
    shaped = [[1.0, 0.75, -1.0, 0.25], [1.0, 0.25]]  # group b is all-correct but no longer all-equal: kept
    np.testing.assert_allclose(out.episode, adv("grpo", shaped).episode)
    assert out.keep.all() and out.metrics["overlong_penalised"] == pytest.approx(4 / 6)
    np.testing.assert_allclose(inp.rewards, [1, 1, 0, 1, 1, 1])  # the caller's rewards are not modified
    np.testing.assert_array_equal(get_estimator("dapo")(inp).keep, [True] * 4 + [False] * 2)  # unshaped: b dropped
