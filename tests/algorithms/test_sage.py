"""SAGE: the branch-guided KL anchor by hand, and its effect on a fresh LoRA policy (SmolLM2-135M)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from rlvr_gym.algorithms.advantages import AdvantageInput
from rlvr_gym.algorithms.advantages.sage import sage
from rlvr_gym.algorithms.losses import LossConfig, policy_loss, sage_branch_guide


def test_branch_guide_and_shaped_k3_hand_values():
    """H = [0.5, 1.7, 5.0]: q = 1 + 0.3 ReLU(H - 1.2) = [1, 1.15, 2.14 -> clamp 1.4].
    log pi = log pi_ref = -1 everywhere; anchor a = log pi_ref + log q, d = a - log pi = log q;
    k3 = e^d - d - 1 = q - log q - 1 = [0, 0.15 - 0.139762 = 0.010238, 0.4 - 0.336472 = 0.063528];
    token-mean KL = 0.073766 / 3 = 0.024589, times beta 0.05 (advantages 0 here, so the loss is the KL term).
    d(k3)/d(log pi) = 1 - q = [0, -0.15, -0.4] -> gradient beta (1 - q) / 3."""
    ent = torch.tensor([[0.5, 1.7, 5.0]], dtype=torch.float64)
    torch.testing.assert_close(sage_branch_guide(ent), torch.tensor([[1.0, 1.15, 1.4]], dtype=torch.float64))
    logp = torch.full((1, 3), -1.0, dtype=torch.float64, requires_grad=True)
    ref = torch.full((1, 3), -1.0, dtype=torch.float64)
    cfg = LossConfig(kl_coef=0.05, sage_guide="branch")
    loss, m = policy_loss(
        logp,
        ref.clone(),
        torch.zeros(1, 3, dtype=torch.float64),
        torch.ones(1, 3),
        cfg,
        ref_logprobs=ref,
        entropy=ent,
    )
    expected = [0.0, 0.15 - math.log(1.15), 0.4 - math.log(1.4)]
    assert float(m["kl_ref"]) == pytest.approx(sum(expected), abs=1e-9)
    assert float(loss.detach()) == pytest.approx(0.05 * sum(expected) / 3, abs=1e-9)
    loss.backward()
    np.testing.assert_allclose(logp.grad[0].numpy(), [0.0, 0.05 * -0.15 / 3, 0.05 * -0.4 / 3], atol=1e-12)


def test_estimator_prescribes_the_anchor_and_needs_a_reference():
    out = sage(AdvantageInput.from_rewards([[1.0, 0.0]]))
    assert out.loss_overrides["sage_guide"] == "branch" and out.loss_overrides["kl_coef"] == 0.05
    from rlvr_gym.algorithms.train_config import LossSettings

    cfg = LossSettings().to_loss_config(512, out.loss_overrides)
    assert cfg.sage_guide == "branch" and cfg.kl_coef == 0.05
    with pytest.raises(ValueError, match="reference"):
        policy_loss(torch.zeros(1, 2), torch.zeros(1, 2), torch.ones(1, 2), torch.ones(1, 2), cfg)
    with pytest.raises(ValueError):
        sage(AdvantageInput.from_rewards([[1.0, 0.0]]), beta=0.0)


def test_fresh_lora_policy_gets_a_kl_gradient_only_from_the_guide():
    """SmolLM2-135M + a fresh LoRA (B = 0): policy = reference, so the plain k3 KL is 0 with zero gradient; with
    SAGE's anchor the tokens whose entropy exceeds 1.2 nats get a KL > 0 and a non-zero gradient."""
    from rlvr_gym.algorithms.batch import Row, collate
    from rlvr_gym.algorithms.modeling import apply_lora, load_model, reference_policy, token_logprobs

    model, tok = load_model(None)
    model = apply_lora(model, r=4, alpha=8, dropout=0.0, target_modules=["q_proj", "v_proj"])
    ids = tok("Q: What is 7 + 5? A: I think the answer is 12, or maybe 13.").input_ids
    k = 8
    batch = collate([Row(ids, [0] * k + [1] * (len(ids) - k), [0.0] * len(ids), [0.0] * len(ids))], tok.pad_token_id)
    with torch.no_grad(), reference_policy(model) as ref_model:
        ref = token_logprobs(ref_model, batch, autocast=False)[0]
    params = [p for p in model.parameters() if p.requires_grad]
    results = {}
    for guide in (None, "branch"):
        model.zero_grad()
        logp, ent = token_logprobs(model, batch, with_entropy=True, autocast=False)
        cfg = LossConfig(kl_coef=0.05, sage_guide=guide)
        loss, m = policy_loss(logp, logp.detach(), batch.advantages, batch.mask, cfg, ref_logprobs=ref, entropy=ent)
        loss.backward()
        grad = torch.cat([p.grad.flatten() for p in params if p.grad is not None])
        results[guide] = (float(m["kl_ref"]), float(grad.norm()), float(((ent > 1.2) * batch.mask).sum()))
    assert results[None][0] == pytest.approx(0.0, abs=1e-6) and results[None][1] == pytest.approx(0.0, abs=1e-9)
    assert results["branch"][2] > 0  # some generated tokens are forks
    assert results["branch"][0] > 1e-3 and results["branch"][1] > 1e-6
