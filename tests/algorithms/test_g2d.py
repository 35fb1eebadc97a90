"""G2D: the pair builder and the DPO loss by hand, and the three stages on the tiny Llama with a falling DPO loss."""

from __future__ import annotations

import math

import pytest
import torch

from rlvr_gym.algorithms.g2d import build_pairs, dpo_loss
from rlvr_gym.types import Episode, Verdict


def _group(gid: str, passed: list[bool]) -> list[Episode]:
    return [
        Episode(
            episode_id=f"{gid}{i}",
            env_id="x",
            task_id=gid,
            group_id=gid,
            sample_index=i,
            verdict=Verdict(reward=float(p), passed=p),
        )
        for i, p in enumerate(passed)
    ]


def test_pair_builder_hand_values():
    """A all right and B all wrong are dropped (p_hat 1, 0). C = [1, 0, 0, 1]: p_hat 0.5, n+ n- = 4 -> 4 pairs;
    D = [1, 0, 0, 0, 0]: p_hat 0.2, 1 x 4 -> 4; E = [1, 0]: 0.5, 1 x 1 -> 1 (min(m, n+ n-)). Ranked by p_hat(1 - p_hat):
    C (0.25), E (0.25), D (0.16). C's pairs along the grid's diagonals: (C0, C1), (C0, C2), (C3, C1), (C3, C2).
    With m = 2: C 2, E 1, D 2 = 5 pairs."""
    eps = _group("A", [True] * 3) + _group("B", [False] * 2) + _group("D", [True] + [False] * 4)
    eps += _group("C", [True, False, False, True]) + _group("E", [True, False])
    pairs = build_pairs(eps, max_pairs=4)
    assert [p.chosen.task_id for p in pairs] == ["C"] * 4 + ["E"] + ["D"] * 4
    assert [(p.chosen.episode_id, p.rejected.episode_id) for p in pairs[:4]] == [
        ("C0", "C1"),
        ("C0", "C2"),
        ("C3", "C1"),
        ("C3", "C2"),
    ]
    assert all(p.chosen.passed and not p.rejected.passed for p in pairs)
    assert len(build_pairs(eps, max_pairs=2)) == 5
    assert [p.chosen.task_id for p in build_pairs(eps, rank=False)][:5] == ["D"] * 4 + ["C"]


def test_dpo_loss_hand_value_and_gradient_sign():
    """pi_c = -1, pi_r = -2, ref_c = ref_r = -1.5, beta 0.1: margin 0.1 (0.5 - (-0.5)) = 0.1,
    loss = -log sigmoid(0.1) = log(1 + e^-0.1) = 0.644397; the gradient raises pi_c and lowers pi_r. Policy = reference
    gives ln 2 = 0.693147."""
    pc, pr = torch.tensor([-1.0], requires_grad=True), torch.tensor([-2.0], requires_grad=True)
    loss, m = dpo_loss(pc, pr, torch.tensor([-1.5]), torch.tensor([-1.5]), beta=0.1)
    assert loss.item() == pytest.approx(0.644397, abs=1e-6) and m["accuracy"] == 1.0
    loss.backward()
    assert pc.grad.item() < 0 < pr.grad.item()
    same, _ = dpo_loss(torch.tensor([-3.0]), torch.tensor([-4.0]), torch.tensor([-3.0]), torch.tensor([-4.0]), 0.1)
    assert float(same) == pytest.approx(math.log(2))


def test_config_loads_with_k0(length_env_id, tmp_path):
    from rlvr_gym.algorithms.train_config import load_config

    cfg = load_config(
        {"run_dir": str(tmp_path), "steps": 0, "rollout": {"env": length_env_id}, "algorithm": {"name": "g2d"}}
    )
    assert cfg.steps == 0
    with pytest.raises(ValueError):
        load_config(
            {"run_dir": str(tmp_path), "rollout": {"env": length_env_id}, "algorithm": {"name": "g2d", "samples": 1}}
        )


def test_three_stages_on_the_tiny_model(length_env_id, tiny_model, tokenizer, tmp_path):
    """Mechanism: K = 1 GRPO step on LengthEnv (pass = vowel share >= 0.5), then 6 prompts x 6 samples at T = 1 from
    pi_K, pairs from the mixed prompts, 3 DPO epochs (one step each, lr 1e-2, beta 0.1). The first DPO loss is ln 2
    (policy = reference = pi_K) and the epoch losses fall. Measured (seed 0): stage-2 pass rate 0.028, 1 of 6 prompts
    mixed (p_hat 1/6: 1 x 5 replies -> m = 4 pairs), DPO epoch losses 0.693 -> 0.641 -> 0.553."""
    from rlvr_gym.algorithms.g2d import G2dTrainer
    from rlvr_gym.algorithms.train_config import load_config

    cfg = load_config(
        {
            "run_dir": str(tmp_path),
            "seed": 0,
            "steps": 1,
            "tensorboard": False,
            "progress": False,
            "model": {"lora": {"r": 4, "alpha": 8}, "threads": 1},
            "rollout": {"env": length_env_id, "prompts_per_step": 2, "group_size": 3, "max_new_tokens": 6},
            "eval": {"num_tasks": 2, "every": 100, "max_new_tokens": 4},
            "algorithm": {"name": "g2d", "prompts": 6, "samples": 6, "epochs": 3, "pairs_per_step": 64, "lr": 1e-2},
            "micro_batch_tokens": 512,
        }
    )
    out = G2dTrainer(cfg, model=tiny_model, tokenizer=tokenizer).run()
    g = out["g2d"]
    assert out["step"] == 1 and g["warmup_steps"] == 1 and g["pairs"] > 0
    losses = g["dpo"]["epoch_loss"]
    assert losses[0] == pytest.approx(math.log(2), abs=1e-4) and losses[2] < losses[1] < losses[0]
    lines = (tmp_path / "g2d" / "pairs.jsonl").read_text().splitlines()
    assert len(lines) == g["pairs"] and (tmp_path / "g2d" / "trainable.safetensors").exists()
