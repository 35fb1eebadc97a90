"""Pion: the high-pass iteration by hand, per-head layouts (SmolLM2's 9 q / 3 kv heads), and one full fine-tuning
step on the tiny Llama whose attention/FFN updates are high-passed per head."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rlvr_gym.algorithms.pion import PionAdamW, from_head_view, head_view, high_pass_ns, is_pion_param

MUON = (3.4445, -4.7750, 2.0315)  # Muon's quintic Newton-Schulz coefficients, for contrast


def _muon(g: torch.Tensor) -> torch.Tensor:
    x = g / g.norm()
    for _ in range(5):
        gram = x @ x.T
        x = MUON[0] * x + (MUON[1] * gram + MUON[2] * gram @ gram) @ x
    return x


def test_high_pass_hand_values():
    """diag(0.9, 0.3): ||.||_F = 0.948683, so sigma = (0.948683, 0.316228). Five steps of s -> 2.5 s^3 - 1.5 s^5:
    0.948683 -> 0.981887 -> 0.997613 -> 0.999957 -> 1.0 -> 1.0 and 0.316228 -> 0.074314 -> 0.001023 -> 0 -> 0 -> 0:
    diag(1, 0) (bf16: within 1e-2). Muon's polynomial keeps both: about (0.7, 1.1), not 0/1.
    Equal sigma, rank 2 (diag(1, 1, 0) -> 0.707107 each, below sqrt(2/3) = 0.816):
    0.707107 -> 0.618718 -> 0.456127 -> 0.207630 -> 0.021799 -> 0.000026: about 0."""
    out = high_pass_ns(torch.diag(torch.tensor([0.9, 0.3])))
    np.testing.assert_allclose(out.numpy(), np.diag([1.0, 0.0]), atol=1e-2)
    muon = torch.diagonal(_muon(torch.diag(torch.tensor([0.9, 0.3])))).numpy()
    assert 0.6 < muon.min() < 0.9 and 1.0 < muon.max() < 1.3
    flat = high_pass_ns(torch.diag(torch.tensor([1.0, 1.0, 0.0])))
    assert flat.abs().max() < 1e-2
    # a tall matrix is iterated transposed and returned in its own shape; the rotation is kept: U diag(1, 0) V^T
    u, _ = torch.linalg.qr(torch.randn(5, 2, generator=torch.Generator().manual_seed(0)))
    tall = u @ torch.diag(torch.tensor([0.9, 0.3]))
    np.testing.assert_allclose(high_pass_ns(tall).numpy(), (u[:, :1] @ torch.tensor([[1.0, 0.0]])).numpy(), atol=2e-2)


def test_promotion_steps_lift_small_directions():
    """k_p = 5 promotion steps (s -> 1.875 s - 1.25 s^3 + 0.375 s^5) move 0.316228 up (0.55 after one step), unlike
    suppression: the weak direction survives."""
    out = torch.diagonal(high_pass_ns(torch.diag(torch.tensor([0.9, 0.3])), k_p=5)).numpy()
    assert out[1] > 0.5 and out[0] > 0.9


def test_smollm2_per_head_groups():
    """SmolLM2-135M (9 q heads, 3 kv heads, head_dim 64, hidden 576, 30 layers): q as (9, 64, 576), k/v as
    (3, 64, 576), o as (9, 576, 64), FFN whole; 30 x 7 = 210 Pion tensors, embeddings and norms to AdamW."""
    from rlvr_gym.algorithms.modeling import load_model

    model, _ = load_model(None)
    named = dict(model.named_parameters())
    pion = [n for n, p in named.items() if is_pion_param(n, p)]
    assert len(pion) == 210 and not any("embed" in n or "norm" in n for n in pion)
    layer = "model.layers.0."
    shapes = {
        k: tuple(head_view(layer + k, named[layer + k], 9, 3).shape)
        for k in ("self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.o_proj.weight", "mlp.up_proj.weight")
    }
    assert shapes == {
        "self_attn.q_proj.weight": (9, 64, 576),
        "self_attn.k_proj.weight": (3, 64, 576),
        "self_attn.o_proj.weight": (9, 576, 64),
        "mlp.up_proj.weight": (1, 1536, 576),
    }
    o = named[layer + "self_attn.o_proj.weight"].detach()
    view = head_view("o_proj.weight", o, 9, 3)
    assert torch.equal(view[2], o[:, 128:192]) and torch.equal(from_head_view("o_proj.weight", view, o.shape), o)


def test_refused_with_lora_and_loads_full(length_env_id, tmp_path):
    from rlvr_gym.algorithms.train_config import load_config

    base = {"run_dir": str(tmp_path), "rollout": {"env": length_env_id}, "algorithm": {"name": "pion"}}
    with pytest.raises(ValueError, match="full fine-tuning"):
        load_config(base)
    assert load_config({**base, "model": {"lora": None}}).algorithm.name == "pion"


def test_one_step_is_high_passed_per_head(length_env_id, tiny_model, tokenizer, tmp_path, one_turn_episodes):
    """Mechanism: full fine-tuning of the tiny Llama (4 q / 2 kv heads of 16, hidden 64, FFN 128), one `PionTrainer`
    update on 3 scripted replies (A = +1, 0, -1 by GRPO on rewards 1, 0.5, 0). Every attention/FFN tensor moves by
    exactly lr * 5 * sqrt(max(rows, cols)) * X per head with X = high-pass(0.05 g), whose singular values are ~0 or
    ~1; embeddings and norms move by AdamW (first step: dW = lr g / (|g| + 1e-8)).
    Measured (seed 0): share of per-head singular values of X in (0.1, 0.9): 0.002 (AdamW's first-step update
    lr sign(g) on the same heads, normalised by its top singular value: 0.81); 0.32 directions per head pass at ~1,
    on average (the rest, and whole heads whose gradient has no dominant direction, get ~0)."""
    from rlvr_gym.algorithms.advantages.base import AdvantageOutput
    from rlvr_gym.algorithms.pion import PionTrainer
    from rlvr_gym.algorithms.train_config import load_config

    cfg = load_config(
        {
            "run_dir": str(tmp_path),
            "tensorboard": False,
            "progress": False,
            "model": {"lora": None, "threads": 1, "bf16_autocast": False},
            "rollout": {"env": length_env_id, "prompts_per_step": 1, "group_size": 3},
            "algorithm": {"name": "pion"},
            "optim": {"lr": 1e-3, "grad_clip": 1e9},
            "loss": {"log_kl": False},
        }
    )
    trainer = PionTrainer(cfg, model=tiny_model, tokenizer=tokenizer)
    assert isinstance(trainer.optimizer, PionAdamW)
    prompt = tokenizer("Say something.").input_ids
    replies = ["A short answer with vowels.", "Some text here.", "Nthng."]
    eps = one_turn_episodes(replies, tokenizer=tokenizer, prompt=prompt)
    named = dict(trainer.model.named_parameters())
    before = {n: p.detach().clone() for n, p in named.items()}
    grads: dict[str, torch.Tensor] = {}
    inner_step = trainer.optimizer.step

    def step(closure=None):
        grads.update({n: p.grad.detach().clone() for n, p in named.items() if p.grad is not None})
        return inner_step(closure)

    trainer.optimizer.step = step  # type: ignore[method-assign]
    trainer.update(eps, AdvantageOutput(episode=np.array([1.0, 0.0, -1.0])))
    mid, adam_mid, kept = [], [], []
    for n, p in named.items():
        delta = (before[n] - p.detach()) / cfg.optim.lr
        if not is_pion_param(n, p):
            g = grads[n]
            torch.testing.assert_close(delta, g / (g.abs() + 1e-8), atol=1e-4, rtol=1e-3)
            continue
        heads = head_view(n, delta, 4, 2)
        want = head_view(n, trainer.optimizer.pion_direction(n, 0.05 * grads[n], 0), 4, 2)
        torch.testing.assert_close(heads, want, atol=2e-3, rtol=1e-2)
        sv = torch.linalg.svdvals(heads / (5 * max(heads.shape[-2:]) ** 0.5))
        mid.append(((sv > 0.1) & (sv < 0.9)).float().mean().item())
        kept.append((sv >= 0.9).float().sum(-1).mean().item())
        adam = head_view(n, grads[n].sign(), 4, 2)  # AdamW's first step is lr * sign(g)
        sv_a = torch.linalg.svdvals(adam) / torch.linalg.svdvals(adam).amax(-1, keepdim=True)
        adam_mid.append(((sv_a > 0.1) & (sv_a < 0.9)).float().mean().item())
    assert np.mean(mid) < 0.05 < np.mean(adam_mid) and np.mean(kept) > 0
    # the momentum and AdamW moments are checkpointed and come back on resume
    trainer.save()
    state = trainer.optimizer.state_dict()
    twin = PionTrainer(cfg, model=trainer.model, tokenizer=tokenizer)
    assert twin.resume()
    loaded = twin.optimizer.state_dict()
    assert loaded["param_groups"] == state["param_groups"]
    assert all(
        torch.equal(loaded["state"][k]["momentum"], v["momentum"]) for k, v in state["state"].items() if "momentum" in v
    )
