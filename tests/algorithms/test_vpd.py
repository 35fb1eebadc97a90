"""VPD: the M-step KL, the E-step loss and the beta controller by hand, and one E+M step on the tiny Llama."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from rlvr_gym.algorithms.vpd import adapt_beta, e_step_loss, feedback_text, student_teacher_kl
from rlvr_gym.types import Episode, Turn, Verdict


def test_m_step_kl_hand_values():
    """Equal logits in both contexts: L_M = 0 (and no gradient). Two-token vocabulary, student logits [0, 0]
    (p_S = [0.5, 0.5]), teacher [ln 3, 0] (p_T = [0.75, 0.25]): KL = 0.5 ln(0.5/0.75) + 0.5 ln(0.5/0.25)
    = 0.5 (-0.405465) + 0.5 (0.693147) = 0.143841. The teacher side gets no gradient (stop-gradient)."""
    same = torch.randn(3, 7, requires_grad=True)
    kl = student_teacher_kl(same, same.detach().clone())
    assert torch.allclose(kl, torch.zeros(3), atol=1e-6)
    kl.sum().backward()
    assert same.grad.abs().max() < 1e-6
    student = torch.zeros(1, 2, requires_grad=True)
    teacher = torch.tensor([[math.log(3.0), 0.0]], requires_grad=True)
    kl = student_teacher_kl(student, teacher)
    assert kl.item() == pytest.approx(0.143841, abs=1e-6)
    kl.sum().backward()
    assert teacher.grad is None and student.grad[0, 0] < 0 < student.grad[0, 1]  # student moves toward token 0


def test_e_step_hand_value_and_gradient_sign():
    """beta 0.1, s = +1, log pi - log pi_ref = 2: -log sigmoid(0.2) = 0.598139. The gradient raises log pi for
    s = +1 and lowers it for s = -1."""
    logp = torch.tensor([2.0], requires_grad=True)
    loss = e_step_loss(logp, torch.tensor([0.0]), torch.tensor([1.0]), 0.1)
    assert loss.item() == pytest.approx(0.598139, abs=1e-6)
    loss.backward()
    assert logp.grad.item() < 0
    neg = torch.tensor([0.0], requires_grad=True)
    e_step_loss(neg, torch.tensor([0.0]), torch.tensor([-1.0]), 0.1).backward()
    assert neg.grad.item() > 0


def test_beta_controller_moves_the_right_way():
    """Target 0.05: KL 0.2 > 0.075 -> beta x 1.5 (tighter); KL 0.01 < 0.0333 -> / 1.5; KL 0.05 -> unchanged."""
    assert adapt_beta(0.1, 0.2) == pytest.approx(0.15)
    assert adapt_beta(0.1, 0.01) == pytest.approx(0.1 / 1.5)
    assert adapt_beta(0.1, 0.05) == 0.1


def test_feedback_names_verdict_and_a_contrasting_sibling():
    eps = [
        Episode(
            episode_id=f"e{i}",
            env_id="x",
            task_id="t",
            group_id="g",
            turns=[Turn(index=0, observation=[], action=a)],
            verdict=Verdict(reward=float(p), passed=p, feedback=None if p else "off by 4"),
        )
        for i, (a, p) in enumerate([("64", True), ("60", False)])
    ]
    assert feedback_text(eps[1], eps) == "Feedback on this answer: incorrect (off by 4). A correct attempt was: 64\n"
    assert feedback_text(eps[0], eps[:1]) == "Feedback on this answer: correct.\n"


def test_one_em_step_on_the_tiny_model(length_env_id, tiny_model, tokenizer, tmp_path, one_turn_episodes):
    """Mechanism: a right and a wrong reply, one `VpdTrainer` update (lr 1e-2) on the tiny Llama + LoRA: the
    feedback-conditioned teacher's log-prob of the passed reply rises and of the failed one falls (E-step), the
    student-teacher KL on the same batch falls (M-step), and beta is adapted from the step's KL.
    Measured (seed 0): teacher sequence log-prob +0.427 (passed) / -0.332 (failed) nats, L_M 0.00455 -> 0.00416
    (summed over 12 tokens / 12), step KL 0.0079 < 0.05 / 1.5 -> beta 0.1 -> 0.0667."""
    from rlvr_gym.algorithms.advantages.base import AdvantageOutput
    from rlvr_gym.algorithms.train_config import load_config
    from rlvr_gym.algorithms.vpd import VpdTrainer

    cfg = load_config(
        {
            "run_dir": str(tmp_path),
            "tensorboard": False,
            "progress": False,
            "model": {"lora": {"r": 4, "alpha": 8}, "threads": 1},
            "rollout": {"env": length_env_id, "prompts_per_step": 1, "group_size": 2},
            "algorithm": {"name": "vpd"},
            "optim": {"lr": 1e-2},
            "loss": {"log_kl": False},
        }
    )
    trainer = VpdTrainer(cfg, model=tiny_model, tokenizer=tokenizer)
    prompt = tokenizer("What is 40 + 24?").input_ids
    eps = one_turn_episodes(
        ["It is 64.", "It is 60."], tokenizer=tokenizer, prompt=prompt,
        verdicts=[Verdict(reward=1.0, passed=True), Verdict(reward=0.0, passed=False)],
    )  # fmt: skip
    adv = AdvantageOutput(episode=np.array([1.0, -1.0]))
    first = trainer.update(eps, adv)
    second = trainer.update(eps, adv)
    assert first["vpd/teacher_logp_shift_pos"] > 0 > first["vpd/teacher_logp_shift_neg"]
    assert second["vpd/loss_m"] < first["vpd/loss_m"]
    assert trainer.estimator_state["vpd"]["beta"] != 0.1


def test_settings_it_would_ignore_are_refused(length_env_id, tmp_path):
    from rlvr_gym.algorithms.train_config import load_config

    base = {"run_dir": str(tmp_path), "rollout": {"env": length_env_id}, "algorithm": {"name": "vpd"}}
    assert load_config(base).algorithm.name == "vpd"
    with pytest.raises(ValueError, match="would be ignored"):
        load_config({**base, "epochs": 2})
    with pytest.raises(ValueError, match="loss.kl_coef"):
        load_config({**base, "loss": {"kl_coef": 0.1}})
