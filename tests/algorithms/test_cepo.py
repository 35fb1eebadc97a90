"""CEPO: the contrastive token factor by hand, the hint choice, the answer-conditioned contrast on SmolLM2-135M and
a `CepoTrainer` step."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rlvr_gym.algorithms.cepo import cepo_lambda, cepo_scale, hinted_logprobs, negative_hints
from rlvr_gym.types import Episode, Turn, Verdict


def test_scale_hand_values():
    """Delta = [0.5, -0.1, 0, 0.3], lam 0.5, eps_w 0.2.
    A = +2: w = exp(Delta) = [1.648721, 0.904837, 1, 1.349859] -> clip [0.8, 1.2] = [1.2, 0.904837, 1, 1.2];
    factor 0.5 + 0.5 w = [1.1, 0.952419, 1, 1.1]. A = -1: w = exp(-Delta) = [0.606531, 1.105171, 1, 0.740818] ->
    [0.8, 1.105171, 1, 0.8]; factor [0.9, 1.052585, 1, 0.9]. lam = 0 gives 1 everywhere (plain advantages)."""
    delta = np.array([0.5, -0.1, 0.0, 0.3])
    np.testing.assert_allclose(cepo_scale(delta, 2.0, 0.5), [1.1, 0.952419, 1.0, 1.1], atol=1e-6)
    np.testing.assert_allclose(cepo_scale(delta, -1.0, 0.5), [0.9, 1.052585, 1.0, 0.9], atol=1e-6)
    np.testing.assert_allclose(cepo_scale(delta, 2.0, 0.0), [1, 1, 1, 1])


def test_lambda_decays_linearly_to_zero_over_25_steps():
    """lam0 0.5: step 0 -> 0.5, step 10 -> 0.5 * (1 - 10/25) = 0.3, step 25 and later -> 0."""
    assert [cepo_lambda(s) for s in (0, 10, 25, 40)] == pytest.approx([0.5, 0.3, 0.0, 0.0])


def _ep(gid, reward, action):
    return Episode(
        episode_id=f"{gid}{reward}",
        env_id="x",
        task_id="t",
        group_id=gid,
        verdict=Verdict(reward=reward, passed=reward >= 1.0),
        turns=[Turn(index=0, observation=[], action=action)],
    )


def test_negative_hint_is_the_worst_rejected_answer():
    """Group a: rewards 1, 0.2, 0 -> the 0 one, boxed '13'. Group b: all >= 0.5 -> None (r- = r+).
    Group c: worst rejected has no box -> its first 50 characters."""
    long = "I do not know the answer to this question at all, sorry, friend."
    eps = [
        _ep("a", 1.0, r"\boxed{12}"),
        _ep("a", 0.2, r"\boxed{11}"),
        _ep("a", 0.0, r"so \boxed{13}"),
        _ep("b", 1.0, r"\boxed{12}"),
        _ep("b", 0.5, "12"),
        _ep("c", 0.0, long),
    ]
    assert negative_hints(eps) == {"a": "13", "b": None, "c": long[:50]}


def test_answer_conditioned_contrast_on_smollm2():
    """SmolLM2-135M, 'What is 7 + 5?', responses 'The answer is 12.' / '... 13.', teacher hints r+ = ' 12',
    r- = ' 13'. Delta = log P(y | r+) - log P(y | r-) is largest on the right answer's digit of the correct response
    (measured +4.94, the next |Delta| 0.70) and most negative on the wrong digit of the wrong one (-2.08): the tokens
    the answer explains get the weight."""
    from rlvr_gym.algorithms.modeling import load_model

    model, tok = load_model(None)
    chat = [{"role": "user", "content": "What is 7 + 5?"}]
    prompt = list(tok.apply_chat_template(chat, add_generation_prompt=True, tokenize=True)["input_ids"])

    def enc(s):
        return list(tok(s, add_special_tokens=False)["input_ids"])

    for reply, digit, sign in (("The answer is 12.", "2", 1), ("The answer is 13.", "3", -1)):
        y = enc(reply)
        pos, neg = hinted_logprobs(model, [prompt, prompt], [enc(" 12"), enc(" 13")], [y, y], pad_id=tok.pad_token_id)
        delta = pos - neg
        k = [tok.decode([t]) for t in y].index(digit)
        assert sign * delta[k] > 1.0
        assert int(np.argmax(sign * delta)) == k
    w = cepo_scale(delta, -1.0, 0.5)
    assert w[k] == pytest.approx(1.1)  # the wrong digit of a negative response is pushed down 10% harder


def test_cepo_trainer_step(length_env_id, tiny_model, tokenizer, tmp_path):
    """A `CepoTrainer` step on the tiny model (LengthEnv, ground truth None -> hint ' None'): the hinted forwards run,
    the factors differ between tokens, and the LoRA weights move."""
    from rlvr_gym.algorithms.cepo import CepoTrainer
    from rlvr_gym.algorithms.modeling import trainable_state
    from rlvr_gym.algorithms.train_config import load_config

    cfg = load_config(
        {
            "run_dir": str(tmp_path),
            "seed": 2,
            "steps": 1,
            "tensorboard": False,
            "progress": False,
            "model": {"lora": {"r": 4, "alpha": 8}, "threads": 1},
            "rollout": {"env": length_env_id, "prompts_per_step": 2, "group_size": 3, "max_new_tokens": 6},
            "eval": {"num_tasks": 1, "every": 100, "max_new_tokens": 2},
            "micro_batch_tokens": 256,
        }
    )
    trainer = CepoTrainer(cfg, model=tiny_model, tokenizer=tokenizer)
    before = trainable_state(trainer.model)
    record = trainer.train_step()
    assert record["cepo/lambda"] == 0.5 and record["cepo/episodes"] > 0 and record["cepo/scale_std"] > 0
    after = trainable_state(trainer.model)
    assert any(not torch.equal(before[n], after[n]) for n in before)
