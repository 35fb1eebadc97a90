"""DGG: the surge detector by hand, and a reused batch on SmolLM2-135M whose blocked step leaves the weights alone."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from rlvr_gym.algorithms.dgg import DggGuard, DggSettings


def test_guard_hand_values_tau_rule_and_stop_reusing():
    """ema 0.5, z 3, tau 2, warmup 2, 2 steps per epoch. First epoch g = 1, 3 (always applied):
    m: 1 -> 0.5*1 + 0.5*3 = 2; var: 0 -> 0.5*0 + 0.5*(3 - 1)^2 = 2; z bound = 2 + 3*sqrt(2) = 6.2426;
    g_first = mean(1, 3) = 2, tau bound = 4. Reuse: 3.9 passes both; 4.5 > 4 is blocked (tau), and the batch is
    not reused any more: the next step (g = 1) is blocked too."""
    guard = DggGuard(DggSettings(z=3, tau=2, ema=0.5, warmup=2), steps_per_epoch=2)
    assert [guard.allow(g) for g in (1.0, 3.0)] == [True, True]
    assert guard.state["m"] == pytest.approx(2.0) and guard.state["var"] == pytest.approx(2.0)
    assert guard.threshold() == pytest.approx(2 + 3 * math.sqrt(2))
    assert [guard.allow(g) for g in (3.9, 4.5, 1.0)] == [True, False, False]
    assert guard.reason == "tau" and guard.blocked == 2


def test_guard_hand_values_z_rule_across_batches():
    """Carry on from the state above (m 2, var 2, seen 2) with a new batch, tau 10 (off): first epoch g = 2, 2:
    m stays 2, var 0.5*2 = 1 then 0.5; z bound = 2 + 3*sqrt(0.5) = 4.1213; reuse g = 4.0 passes, 4.2 is blocked (z).
    Before `warmup` first-epoch values the z rule is off (bound inf)."""
    state = {"m": 2.0, "var": 2.0, "seen": 2}
    guard = DggGuard(DggSettings(z=3, tau=10, ema=0.5, warmup=2), steps_per_epoch=2, state=state)
    assert [guard.allow(g) for g in (2.0, 2.0)] == [True, True]
    assert state["var"] == pytest.approx(0.5) and state["seen"] == 4
    assert guard.threshold() == pytest.approx(2 + 3 * math.sqrt(0.5))
    assert [guard.allow(g) for g in (4.0, 4.2)] == [True, False] and guard.reason == "z"
    fresh = DggGuard(DggSettings(warmup=3), steps_per_epoch=1)
    assert fresh.allow(1.0) and fresh.threshold() == math.inf


def test_first_epoch_is_never_blocked():
    guard = DggGuard(DggSettings(tau=1.5), steps_per_epoch=3)
    assert all(guard.allow(g) for g in (1.0, 100.0, 1e6))


def test_dgg_trainer_blocks_a_real_surge_on_smollm2(tmp_path):
    """SmolLM2-135M + LoRA, one batch (2 right, 2 wrong answers, A = ±1) reused for 3 epochs at an aggressive lr
    (3e-2): the policy overshoots and in epoch 3 the lm_head gradient norm surges (measured 4.79, 0.84, 111.2);
    111.2 > tau * g_first = 2 * 4.79, so DGG drops that step: the optimizer stepped twice and the LoRA weights are
    those of after epoch 2."""
    from rlvr_gym.algorithms.advantages.base import AdvantageOutput
    from rlvr_gym.algorithms.dgg import DggTrainer
    from rlvr_gym.algorithms.modeling import load_model, trainable_state
    from rlvr_gym.algorithms.train_config import load_config
    from rlvr_gym.types import Episode, Turn

    model, tok = load_model(None)
    chat = [{"role": "user", "content": "What is 7 + 5?"}]
    prompt = list(tok.apply_chat_template(chat, add_generation_prompt=True, tokenize=True)["input_ids"])
    replies = ["7 + 5 = 12, so the answer is 12.", "The answer is 12.", "The answer is 13.", "I think it is 75."]
    eps = [
        Episode(
            episode_id=f"e{i}",
            env_id="x",
            task_id="t",
            group_id="g",
            turns=[
                Turn(
                    index=0,
                    observation=[],
                    action=r,
                    prompt_token_ids=prompt,
                    token_ids=tok(r).input_ids + [tok.eos_token_id],
                )
            ],
        )
        for i, r in enumerate(replies)
    ]
    cfg = load_config(
        {
            "run_dir": str(tmp_path),
            "tensorboard": False,
            "progress": False,
            "model": {
                "lora": {"r": 4, "alpha": 8, "target_modules": ["q_proj", "v_proj"]},
                "threads": 1,
                "bf16_autocast": False,
            },
            "rollout": {"env": "rlvr/MathAddition-v0", "prompts_per_step": 2, "group_size": 2, "max_new_tokens": 24},
            "loss": {"log_kl": False},
            "optim": {"lr": 3e-2},
            "epochs": 3,
            "minibatches": 1,
            "old_logprobs": "recompute",
        }
    )
    trainer = DggTrainer(cfg, model=model, tokenizer=tok)
    inner = trainer.optimizer._inner
    applied: list[dict] = []
    real_step = inner.step

    def step(closure=None):
        out = real_step(closure)
        applied.append(trainable_state(trainer.model))
        return out

    inner.step = step
    out = trainer.update(eps, AdvantageOutput(episode=np.array([1.0, 1.0, -1.0, -1.0])))
    g = trainer.dgg_norms
    assert len(g) == 3 and g[2] > 2 * g[0] and max(g[:2]) < 2 * g[0]
    assert out["dgg/blocked_steps"] == 1.0 and trainer.guard.reason == "tau"
    assert len(applied) == 2
    after = trainable_state(trainer.model)
    assert all(torch.equal(after[n], applied[-1][n]) for n in after)
    head = trainer.model.get_base_model().get_output_embeddings().weight
    assert not head.requires_grad and head.grad is None  # measured only: never trained, never checkpointed
