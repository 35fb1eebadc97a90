"""DelTA token weights: hand values from its formula (docs/algorithms-more.md), the trainer path, and the
mechanism on SmolLM2-135M."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rlvr_gym.algorithms.advantages.base import AdvantageOutput
from rlvr_gym.algorithms.batch import build_rows
from rlvr_gym.algorithms.delta import DeltaSettings, delta_token_weights, reweighted_advantages, token_proxies
from rlvr_gym.types import Episode, Turn


def _w(v, a, **kw):
    v = torch.tensor(v, dtype=torch.float64).reshape(len(v), -1)
    return delta_token_weights(v, torch.tensor(a, dtype=torch.float64), **kw).numpy()


def test_two_tokens_per_side_hand_values():
    """v = [0, 2 | 4, 6] (1-D), A = [+1, +1 | -1, -1], K = 0.
    mu+ = 1, mu- = 5; d+ = [1, 1, 9, 25], d- = [25, 9, 1, 1]; m+ = d- - d+ = [24, 8], m- = d+ - d- = [8, 24];
    gamma± = std([24, 8]) = 8; omega = sigmoid([3, 1, 1, 3]) = [.952574, .731059, .731059, .952574];
    c = 0.8 + 0.4 omega = [1.181030, 1.092423, 1.092423, 1.181030], mean 1.136727 ->
    c / mean = [1.038974, 0.961026, 0.961026, 1.038974]: the tokens nearer the other side's centroid weigh less."""
    c = _w([0, 2, 4, 6], [1, 1, -1, -1], refine_iters=0)
    np.testing.assert_allclose(c, [1.038974, 0.961026, 0.961026, 1.038974], atol=1e-6)
    assert c.mean() == pytest.approx(1.0)


def test_zero_advantage_token_gets_lambda_min_before_normalising():
    """Same four tokens plus v = 5 with A = 0: the centroids ignore it (weight |A| = 0); its raw weight is
    lambda_min = 0.8, so the mean is (4.546906 + 0.8) / 5 = 1.069381 and the weights are
    [1.104405, 1.021547, 1.021547, 1.104405, 0.748096]."""
    c = _w([0, 2, 4, 6, 5], [1, 1, -1, -1, 0], refine_iters=0)
    np.testing.assert_allclose(c, [1.104405, 1.021547, 1.021547, 1.104405, 0.748096], atol=1e-6)


def test_refinement_moves_the_centroids():
    """v = [0, 1, 3 | 5, 6], A = [+1, +1, +1 | -1, -1].
    K = 0: mu+ = 4/3, mu- = 5.5; m = [28.4722, 20.1389, 3.4722 | 13.1944, 21.5278]; gamma+ = 10.3935,
    gamma- = 4.1667; omega = [.939313, .874093, .582751 | .959560, .994329]; c/mean(c) with mean 1.148004 =
    [1.024148, 1.001423, 0.899910, 1.031202, 1.043317].
    K = 1: centroids re-weighted by omega |A|: mu+ = (0 .939313 + 1 .874093 + 3 .582751)/2.396157 = 1.094396,
    mu- = (5 .959560 + 6 .994329)/1.953889 = 5.508897; then m = [29.1502, 20.3212, 2.6632 | 14.9948, 23.8238],
    omega = [.933839, .863589, .560171 | .967601, .995489] -> [1.024336, 0.999808, 0.893871, 1.036124, 1.045861]."""
    np.testing.assert_allclose(
        _w([0, 1, 3, 5, 6], [1, 1, 1, -1, -1], refine_iters=0),
        [1.024148, 1.001423, 0.899910, 1.031202, 1.043317],
        atol=1e-6,
    )
    np.testing.assert_allclose(
        _w([0, 1, 3, 5, 6], [1, 1, 1, -1, -1], refine_iters=1),
        [1.024336, 0.999808, 0.893871, 1.036124, 1.045861],
        atol=1e-6,
    )


def test_one_sided_batch_has_no_contrast_and_weights_one():
    np.testing.assert_array_equal(_w([0, 1, 2], [1, 0.5, 2]), [1, 1, 1])
    with pytest.raises(ValueError):
        DeltaSettings(lambda_min=1.2, lambda_max=0.8)


def _episode(prompt, gens, reward):
    turns = [
        Turn(index=i, observation=[], action="", prompt_token_ids=p, token_ids=g, logprobs=[-1.0] * len(g))
        for i, (p, g) in enumerate(zip(prompt, gens, strict=True))
    ]
    return Episode(episode_id="e", env_id="x", task_id="t", group_id="g", total_reward=reward, turns=turns)


def test_reweighted_advantages_line_up_with_turn_tokens():
    """Episode 0: two turns in one row (3 + 2 generated tokens), A = 2; episode 1: A = 0 (no row, untouched).
    Row weights [1, 2, 3, 4, 5] land on turn 0 as [1, 2, 3] and turn 1 as [4, 5], times A = 2."""
    eps = [_episode([[1], [1, 2, 3, 4, 9]], [[2, 3, 4], [5, 6]], 1.0), _episode([[1]], [[2]], 0.0)]
    adv = AdvantageOutput(episode=np.array([2.0, 0.0]))
    rows = build_rows(eps, adv)
    assert len(rows) == 1
    out = reweighted_advantages(eps, adv, rows, [np.array([1.0, 2, 3, 4, 5])])
    np.testing.assert_allclose(out.token[0][0], [2, 4, 6])
    np.testing.assert_allclose(out.token[0][1], [8, 10])
    np.testing.assert_allclose(out.token[1][0], [0])
    new_rows = build_rows(eps, out)
    assert [a for a, m in zip(new_rows[0].advantages, new_rows[0].loss_mask, strict=True) if m] == [2, 4, 6, 8, 10]


@pytest.fixture(scope="module")
def smollm():
    from rlvr_gym.algorithms.modeling import load_model

    torch.manual_seed(0)
    return load_model(None)


def test_mechanism_on_smollm2_token_weights_differ_and_mean_one(smollm):
    """Two correct and two wrong answers to one prompt (A = ±1) on the embedded SmolLM2-135M: the proxy comes from a
    real forward, and the weights differ between tokens, stay in [lambda_min, lambda_max] / mean, and average 1."""
    model, tok = smollm
    prompt = tok.apply_chat_template(
        [{"role": "user", "content": "What is 7 + 5?"}], add_generation_prompt=True, tokenize=True
    )
    prompt = list(prompt["input_ids"] if hasattr(prompt, "keys") else prompt)
    replies = ["7 + 5 = 12, so the answer is 12.", "The answer is 12.", "The answer is 13.", "I think it is 75."]
    eps = [_episode([prompt], [tok(r).input_ids + [tok.eos_token_id]], 0.0) for r in replies]
    adv = AdvantageOutput(episode=np.array([1.0, 1.0, -1.0, -1.0]))
    rows = build_rows(eps, adv)
    v, a, counts = token_proxies(model, rows, pad_id=tok.pad_token_id)
    assert v.shape == (sum(counts), model.config.hidden_size) and torch.isfinite(v).all()
    c = delta_token_weights(v, a).numpy()
    assert c.mean() == pytest.approx(1.0, abs=1e-9)
    assert c.std() > 0.01 and len(np.unique(np.round(c, 6))) > len(c) // 2
    raw_max, raw_min = 1.2, 0.8
    assert c.max() <= raw_max / raw_min + 1e-9 and c.min() >= raw_min / raw_max - 1e-9
    assert np.all(c > 0)


def test_delta_trainer_step_reweights_the_update(length_env_id, tiny_model, tokenizer, tmp_path):
    """One training step of `DeltaTrainer` (tiny random Llama, real rollouts): its metrics show token weights that
    differ (std > 0) and average 1 over the trained tokens, and the step still updates the LoRA weights."""
    from rlvr_gym.algorithms.delta import DeltaTrainer
    from rlvr_gym.algorithms.modeling import trainable_state
    from rlvr_gym.algorithms.train_config import load_config

    cfg = load_config(
        {
            "run_dir": str(tmp_path),
            "seed": 1,
            "steps": 1,
            "tensorboard": False,
            "progress": False,
            "model": {"lora": {"r": 4, "alpha": 8}, "threads": 1},
            "rollout": {"env": length_env_id, "prompts_per_step": 2, "group_size": 3, "max_new_tokens": 6},
            "eval": {"num_tasks": 1, "every": 100, "max_new_tokens": 2},
            "micro_batch_tokens": 256,
            "checkpoint_every": 100,
        }
    )
    trainer = DeltaTrainer(cfg, model=tiny_model, tokenizer=tokenizer)
    before = trainable_state(trainer.model)
    record = trainer.train_step()
    after = trainable_state(trainer.model)
    assert record["delta/weight_std"] > 0
    assert record["delta/weight_min"] < 1 < record["delta/weight_max"]
    assert any(not torch.equal(before[n], after[n]) for n in before)
