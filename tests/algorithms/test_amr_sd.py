"""AMR-SD: the gate by hand (sparsity, sign, lam = 0), the answer filter, and one step on SmolLM2 running the
reflection, the hinted and the plain forward on a 2-rollout group."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rlvr_gym.algorithms.amr_sd import amr_factor, amr_lambda, strip_answer


def test_gate_hand_values():
    """CIG = [0.2, 0.9, 3.5, -2.0], lam 0.5, tau+ 0.5, tau- 1.0, cap 2.
    A = +1: g = ReLU(CIG - 0.5) = [0, 0.4, 3.0, 0] -> min(g, 2) = [0, 0.4, 2, 0] -> factor [1, 1.2, 2.0, 1].
    A = -2: g = ReLU(-CIG - 1.0) = [0, 0, 0, 1.0] -> A_t = -2 [1, 1, 1, 1.5] = [-2, -2, -2, -3].
    Under the thresholds (|CIG| small) the factor is exactly 1 (sparse); lam = 0 gives 1 everywhere (plain GRPO);
    the factor is >= 1, so sign(A_t) = sign(A) always; A = 0 stays 0."""
    cig = np.array([0.2, 0.9, 3.5, -2.0])
    np.testing.assert_allclose(amr_factor(cig, 1.0, 0.5), [1.0, 1.2, 2.0, 1.0])
    np.testing.assert_allclose(-2.0 * amr_factor(cig, -2.0, 0.5), [-2.0, -2.0, -2.0, -3.0])
    np.testing.assert_array_equal(amr_factor(np.array([0.3, -0.9, 0.5]), 1.0, 0.5), 1.0)
    np.testing.assert_array_equal(amr_factor(np.array([0.3, -0.9, 0.5]), -1.0, 0.5), 1.0)
    np.testing.assert_array_equal(amr_factor(cig, 1.0, 0.0), 1.0)
    rng = np.random.default_rng(0)
    for a in (-1.5, 0.7):
        assert np.all(np.sign(a * amr_factor(rng.normal(0, 3, 50), a, 0.5)) == np.sign(a))
    assert 0.0 * amr_factor(cig, 0.0, 0.5).sum() == 0.0


def test_lambda_schedule_and_answer_filter():
    """lam 0.5 -> 0 linearly: step 0 0.5, step 50 of 100 0.25, step 100 0. The filter hides "64" as a number
    (twice) but not inside "640"; text answers case-insensitively."""
    assert [amr_lambda(s, 0.5, 100) for s in (0, 50, 100, 150)] == [0.5, 0.25, 0.0, 0.0]
    hint, n = strip_answer("Add tens then ones: 64. Not 640. So 64!", "64")
    assert n == 2 and hint == "Add tens then ones: [answer withheld]. Not 640. So [answer withheld]!"
    assert strip_answer("The capital is PARIS.", "Paris") == ("The capital is [answer withheld].", 1)
    assert strip_answer("anything", "") == ("anything", 0)


def test_one_step_on_smollm2(tmp_path):
    """Mechanism: SmolLM2-135M + LoRA, MathAddition task 5 (40 + 24), a right and a wrong reply (A = +-0.707).
    The trainer lets the policy write each rollout a hint (greedy, <= 64 tokens, "64" withheld), runs the hinted and
    the plain forward, and amplifies only tokens whose CIG passes the gate; the LoRA weights move.
    Measured (defaults tau+ 0.5, tau- 1.0): CIG |mean| 0.85 nats, 5 of 46 tokens amplified (factor max 2.0), hints
    of 14 tokens on average. The hints themselves are poor at 135M: "Your answer is correct." for the right reply and
    a copy of its own wrong answer for the wrong one (no answer string had to be removed)."""
    from rlvr_gym.algorithms.advantages.base import AdvantageOutput
    from rlvr_gym.algorithms.amr_sd import AmrSdTrainer
    from rlvr_gym.algorithms.modeling import load_model, trainable_state
    from rlvr_gym.algorithms.train_config import load_config
    from rlvr_gym.types import Episode, Message, Turn, Verdict

    model, tok = load_model(None)
    question = "What is 40 + 24?\n\nPut your final answer in \\boxed{}."
    chat = [{"role": "user", "content": question}]
    prompt = list(tok.apply_chat_template(chat, add_generation_prompt=True, tokenize=True)["input_ids"])
    replies = ["40 + 24 = 64, so the answer is \\boxed{64}.", "40 + 24 = 60, so the answer is \\boxed{60}."]
    eps = [
        Episode(
            episode_id=f"e{i}",
            env_id="rlvr/MathAddition-v0",
            task_id="t5",
            task_index=5,
            group_id="g",
            turns=[
                Turn(
                    index=0,
                    observation=[Message(role="user", content=question)],
                    action=r,
                    prompt_token_ids=prompt,
                    token_ids=tok(r).input_ids + [tok.eos_token_id],
                )
            ],
            verdict=Verdict(reward=float(i == 0), passed=i == 0),
        )
        for i, r in enumerate(replies)
    ]
    cfg = load_config(
        {
            "run_dir": str(tmp_path),
            "steps": 10,
            "tensorboard": False,
            "progress": False,
            "model": {"lora": {"r": 4, "alpha": 8, "target_modules": ["q_proj", "v_proj"]}, "threads": 1},
            "rollout": {"env": "rlvr/MathAddition-v0", "prompts_per_step": 1, "group_size": 2, "max_new_tokens": 24},
            "algorithm": {"name": "amr_sd"},
            "loss": {"log_kl": False},
        }
    )
    trainer = AmrSdTrainer(cfg, model=model, tokenizer=tok)
    before = trainable_state(trainer.model)
    out = trainer.update(eps, AdvantageOutput(episode=np.array([0.707107, -0.707107])))
    assert out["amr/lambda"] == 0.5 and 0 < out["amr/hint_tokens"] <= 64
    assert np.isfinite(out["amr/cig_abs_mean"]) and out["amr/cig_abs_mean"] > 0
    assert 1.0 <= out["amr/factor_max"] <= 2.0
    after = trainable_state(trainer.model)
    assert any(not torch.equal(before[n], after[n]) for n in before)
    with pytest.raises(ValueError):
        load_config({**cfg.model_dump(mode="json", exclude_unset=True), "algorithm": {"name": "amr_sd", "cap": 0}})
