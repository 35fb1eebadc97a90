"""Loss pieces on hand-computed values: clipping (asymmetric), aggregation modes, KL estimators, veto, masks."""

from __future__ import annotations

import math

import pytest
import torch

from rlvr_gym.algorithms.losses import LossConfig, aggregate, gather_logprobs, kl_penalty, policy_loss, veto_mask


def t(*rows):
    return torch.tensor(rows, dtype=torch.float32)


def test_clip_higher_is_asymmetric():
    old = t([0.0, 0.0])
    new = t([math.log(1.5), math.log(0.5)])
    mask = t([1.0, 1.0])
    cfg = LossConfig(clip_low=0.2, clip_high=0.28, aggregation="token_mean")
    # A>0 token: min(1.5, 1.28) * 1 ; A<0 token: min(0.5*-1, 0.8*-1) = -0.8
    loss, m = policy_loss(new, old, t([1.0, -1.0]), mask, cfg)
    assert loss.item() == pytest.approx(-(1.28 - 0.8) / 2, abs=1e-6)
    assert m["clip_frac"].item() == 2.0 and m["tokens"].item() == 2.0
    # within the band nothing clips and the gradient is A * ratio
    new2 = torch.tensor([[0.1, -0.1]], requires_grad=True)
    loss2, m2 = policy_loss(new2, old, t([1.0, -1.0]), mask, cfg)
    loss2.backward()
    assert m2["clip_frac"].item() == 0.0
    torch.testing.assert_close(new2.grad, torch.tensor([[-math.exp(0.1) / 2, math.exp(-0.1) / 2]]))


def test_masked_tokens_get_no_gradient():
    lp = torch.zeros(1, 4, requires_grad=True)
    loss, m = policy_loss(lp, torch.zeros(1, 4), torch.ones(1, 4), t([0, 1, 1, 0]), LossConfig())
    loss.backward()
    assert lp.grad[0, 0] == 0 and lp.grad[0, 3] == 0 and lp.grad[0, 1] != 0
    assert m["tokens"].item() == 2


def test_aggregation_modes():
    values = t([1.0, 1.0, 1.0, 0.0], [4.0, 0.0, 0.0, 0.0])
    mask = t([1, 1, 1, 0], [1, 0, 0, 0])
    assert aggregate(values, mask, "token_mean").item() == pytest.approx(7 / 4)
    assert aggregate(values, mask, "seq_mean_token_mean").item() == pytest.approx((1 + 4) / 2)
    assert aggregate(values, mask, "seq_mean_token_sum_norm", max_len=4).item() == pytest.approx((3 / 4 + 4 / 4) / 2)
    # accumulation: two halves with a global normaliser sum to the whole
    whole = aggregate(values, mask, "token_mean")
    parts = aggregate(values[:1], mask[:1], "token_mean", 4.0) + aggregate(values[1:], mask[1:], "token_mean", 4.0)
    assert parts.item() == pytest.approx(whole.item())


def test_kl_estimators():
    lp, ref = t([math.log(0.5)]), t([math.log(0.25)])
    assert kl_penalty(lp, ref, "k1").item() == pytest.approx(math.log(2))
    assert kl_penalty(lp, ref, "k3").item() == pytest.approx(0.5 - 1 + math.log(2))  # r = ref/p = .5
    assert kl_penalty(ref, ref, "k3").item() == 0.0
    loss, m = policy_loss(lp, lp, t([0.0]), t([1.0]), LossConfig(kl_coef=0.1), ref_logprobs=ref)
    assert loss.item() == pytest.approx(0.1 * (math.log(2) - 0.5))
    assert m["kl_ref"].item() == pytest.approx(math.log(2) - 0.5)


def test_veto_drops_suffix_of_negative_rows_only():
    lr = t([0.0, 0.1, 0.5, 0.0], [0.0, 0.1, 0.5, 0.0])
    adv = t([-1.0] * 4, [1.0] * 4)
    out = veto_mask(lr, torch.ones(2, 4), adv, 0.2)
    assert out.tolist() == [[1, 1, 0, 0], [1, 1, 1, 1]]
    lp = lr.clone().requires_grad_(True)
    loss, m = policy_loss(lp, torch.zeros(2, 4), adv, torch.ones(2, 4), LossConfig(veto_eps=0.2))
    assert m["tokens"].item() == 6


def test_gather_logprobs_and_entropy():
    logits = torch.tensor([[[0.0, 0.0], [math.log(3.0), 0.0]]])
    lp, ent = gather_logprobs(logits, torch.tensor([[0, 0]]), with_entropy=True)
    torch.testing.assert_close(lp, torch.tensor([[math.log(0.5), math.log(0.75)]]))
    assert ent[0, 0].item() == pytest.approx(math.log(2))
    assert ent[0, 1].item() == pytest.approx(-(0.75 * math.log(0.75) + 0.25 * math.log(0.25)), abs=1e-6)
