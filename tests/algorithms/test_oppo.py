"""OPPO: the running success probability by hand and an `OppoTrainer` step (the SmolLM2 self-oracle measurement is
in docs/algorithms-more.md: at 135M it does not discriminate)."""

from __future__ import annotations

import math

import numpy as np
import torch

import rlvr_gym
from rlvr_gym import AnswerEnv, Task, Verdict
from rlvr_gym.algorithms.oppo import oppo_token_advantages


def test_token_advantages_hand_values():
    """p0 = 0.25, log rho = [ln 2, ln 0.5, ln 4]: p = [0.5, 0.25, min(1, 1.0)] -> A = p_t - p_{t-1} =
    [0.25, -0.25, 0.75]. p0 = 0.5, log rho = [ln 4, 0]: p = [min(1, 2) = 1, 1] -> [0.5, 0]. p0 = 0: zeros."""
    np.testing.assert_allclose(oppo_token_advantages(np.log([2.0, 0.5, 4.0]), 0.25), [0.25, -0.25, 0.75])
    np.testing.assert_allclose(oppo_token_advantages(np.array([math.log(4.0), 0.0]), 0.5), [0.5, 0.0])
    np.testing.assert_allclose(oppo_token_advantages(np.array([1.0, 1.0]), 0.0), [0.0, 0.0])


def test_sum_of_token_advantages_telescopes():
    """Sum_t A_t = p_T - p0: the dense term redistributes the change of belief over the response's tokens."""
    log_rho = np.array([0.3, -0.2, 0.1, -0.4])
    a = oppo_token_advantages(log_rho, 0.4)
    assert np.isclose(a.sum(), 0.4 * math.exp(log_rho.sum()) - 0.4)


class _LetterEEnv(AnswerEnv):
    """Passed = the answer holds an 'e' (often true for random text), reward = vowel share: groups with a success."""

    family = "test"

    def get_task(self, index: int) -> Task:
        return Task(id=f"e-{index}", prompt=f"Say something about {index}.", ground_truth="eee", metadata={})

    def score_answer(self, task: Task, text: str) -> Verdict:
        letters = [c for c in text.lower() if c.isalpha()]
        reward = sum(c in "aeiou" for c in letters) / len(letters) if letters else 0.0
        return Verdict(reward=reward, passed="e" in text.lower())


def test_oppo_trainer_step(tiny_model, tokenizer, tmp_path):
    """An `OppoTrainer` step on the tiny model (oracle hint ' eee'): the oracle and plain forwards run for groups
    with a success, the dense term is non-zero, and the LoRA weights move."""
    rlvr_gym.register("rlvr/TestOppoLetterE-v0", _LetterEEnv, family="test")
    from rlvr_gym.algorithms.modeling import trainable_state
    from rlvr_gym.algorithms.oppo import OppoTrainer
    from rlvr_gym.algorithms.train_config import load_config

    cfg = load_config(
        {
            "run_dir": str(tmp_path),
            "seed": 2,
            "steps": 1,
            "tensorboard": False,
            "progress": False,
            "model": {"lora": {"r": 4, "alpha": 8}, "threads": 1},
            "rollout": {"env": "rlvr/TestOppoLetterE-v0", "prompts_per_step": 3, "group_size": 4, "max_new_tokens": 6},
            "eval": {"num_tasks": 1, "every": 100, "max_new_tokens": 2},
            "micro_batch_tokens": 256,
        }
    )
    trainer = OppoTrainer(cfg, model=tiny_model, tokenizer=tokenizer)
    before = trainable_state(trainer.model)
    record = trainer.train_step()
    assert record["oppo/episodes"] > 0 and record["oppo/dense_abs_mean"] > 0
    after = trainable_state(trainer.model)
    assert any(not torch.equal(before[n], after[n]) for n in before)
