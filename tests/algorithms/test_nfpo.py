"""NFPO's N-step forward trace: hand values of c_t, the N = 1 and on-policy limits, and two inner epochs on
SmolLM2-135M + LoRA."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from rlvr_gym.algorithms.advantages import AdvantageInput
from rlvr_gym.algorithms.advantages.nfpo import nfpo
from rlvr_gym.algorithms.losses import LossConfig, forward_trace, policy_loss

RHO = [1.1, 0.9, 1.2, 0.8, 1.05]


def _trace(rho, n, mask=None, c_max=2.0):
    log_ratio = torch.log(torch.tensor([rho], dtype=torch.float64))
    mask = torch.ones_like(log_ratio) if mask is None else torch.tensor([mask], dtype=torch.float64)
    return forward_trace(log_ratio, mask, n, c_max)[0].numpy()


def test_forward_trace_hand_values_for_n_1_2_3():
    """rho = [1.1, 0.9, 1.2, 0.8, 1.05]; c_t = product of the next N-1 ratios, cut at the last token:
    N = 1: [1, 1, 1, 1, 1]; N = 2: c_t = rho_{t+1} = [0.9, 1.2, 0.8, 1.05, 1];
    N = 3: c_t = rho_{t+1} rho_{t+2} = [0.9*1.2, 1.2*0.8, 0.8*1.05, 1.05, 1] = [1.08, 0.96, 0.84, 1.05, 1]."""
    np.testing.assert_allclose(_trace(RHO, 1), [1, 1, 1, 1, 1], atol=1e-12)
    np.testing.assert_allclose(_trace(RHO, 2), [0.9, 1.2, 0.8, 1.05, 1], atol=1e-12)
    np.testing.assert_allclose(_trace(RHO, 3), [1.08, 0.96, 0.84, 1.05, 1], atol=1e-12)


def test_forward_trace_clips_and_skips_env_tokens():
    """rho = [1, 3, 1] with N = 2: c_0 = 3 clipped to 2. A multi-turn row [gen, gen, env, env, gen] with
    rho = [1.1, 0.9, 5, 5, 1.2] and N = 2: the env tokens are not actions, so c = [0.9, 1.2, 0, 0, 1]."""
    np.testing.assert_allclose(_trace([1.0, 3.0, 1.0], 2), [2, 1, 1], atol=1e-12)
    np.testing.assert_allclose(_trace([1.1, 0.9, 5, 5, 1.2], 2, mask=[1, 1, 0, 0, 1]), [0.9, 1.2, 0, 0, 1], atol=1e-12)


def _grad(loss_cfg, logp_vals, old, adv, mask=None):
    logp = torch.tensor(np.asarray([logp_vals]), dtype=torch.float64, requires_grad=True)
    mask = torch.ones_like(logp) if mask is None else mask
    loss, metrics = policy_loss(logp, old, adv, mask, loss_cfg)
    loss.backward()
    return loss, logp.grad[0].numpy(), metrics


def test_n1_has_the_clipped_ppo_gradient():
    """N = 1: c = 1, w = rho; the mask drops exactly the tokens whose clipped PPO term is constant (A > 0 with
    rho > 1.28, A < 0 with rho < 0.8), so both gradients are A rho / T on the others, 0 on those."""
    rho = np.array([1.1, 1.5, 0.7, 0.9, 1.4])
    adv = torch.tensor([[1.0, 1.0, -1.0, -1.0, -2.0]], dtype=torch.float64)
    old = torch.zeros(1, 5, dtype=torch.float64)
    ppo = LossConfig(clip_low=0.2, clip_high=0.28)
    nf = LossConfig(clip_low=0.2, clip_high=0.28, nfpo_n=1)
    _, g_ppo, _ = _grad(ppo, np.log(rho), old, adv)
    _, g_nf, m = _grad(nf, np.log(rho), old, adv)
    np.testing.assert_allclose(g_nf, g_ppo, atol=1e-12)
    np.testing.assert_allclose(g_nf, [-1.1 / 5, 0, 0, 0.9 / 5, 2 * 1.4 / 5], atol=1e-12)
    assert float(m["clip_frac"]) == 2.0


def test_all_ratios_one_is_vanilla_policy_gradient():
    """rho = 1 everywhere: c = 1, w = 1, nothing masked; d(-w A)/d log pi = -A, i.e. the gradient of
    -sum A log pi / T (REINFORCE), for any N."""
    adv = torch.tensor([[0.5, -1.0, 2.0, -0.3]], dtype=torch.float64)
    logp = np.array([-1.0, -2.0, -0.5, -3.0])
    old = torch.tensor(logp[None], dtype=torch.float64)
    for n in (1, 2, 4):
        _, g, _ = _grad(LossConfig(nfpo_n=n), logp, old, adv)
        np.testing.assert_allclose(g, -adv[0].numpy() / 4, atol=1e-12)


def test_n_changes_the_gradient_off_policy():
    """rho = [1.1, 0.9, 1.2] with A = +1 and N = 2: w = rho * c = [1.1*0.9, 0.9*1.2, 1.2*1] = [0.99, 1.08, 1.2],
    all inside [0.8, 1.28]; gradient -A w / T = [-0.33, -0.36, -0.4] (PPO's: [-1.1, -0.9, -1.2] / 3)."""
    adv = torch.ones(1, 3, dtype=torch.float64)
    _, g, _ = _grad(LossConfig(clip_high=0.28, nfpo_n=2), np.log([1.1, 0.9, 1.2]), torch.zeros(1, 3), adv)
    np.testing.assert_allclose(g, [-0.33, -0.36, -0.4], atol=1e-12)


def test_estimator_prescribes_the_loss():
    """GRPO advantages (rewards [1, 0]: mean 0.5, unbiased std 0.7071 -> ±0.7071) and the NFPO loss settings."""
    out = nfpo(AdvantageInput.from_rewards([[1.0, 0.0]]), n=3)
    np.testing.assert_allclose(out.episode, [0.5 / math.sqrt(0.5), -0.5 / math.sqrt(0.5)], atol=1e-5)
    assert out.loss_overrides == {"nfpo_n": 3, "nfpo_c_max": 2.0, "clip_low": 0.2, "clip_high": 0.28}
    from rlvr_gym.algorithms.train_config import LossSettings

    assert LossSettings().to_loss_config(512, out.loss_overrides).nfpo_n == 3  # reaches the trainer's loss
    with pytest.raises(ValueError):
        nfpo(AdvantageInput.from_rewards([[1.0, 0.0]]), n=0)


def test_two_inner_epochs_on_smollm2_lora_finite_for_n_1_and_4():
    """Two PPO epochs on one batch (SmolLM2-135M + LoRA r=4): epoch 1 moves the policy (ratios leave 1), so in
    epoch 2 N = 4 and N = 1 give different, finite losses and gradients."""
    from rlvr_gym.algorithms.batch import Row, collate
    from rlvr_gym.algorithms.modeling import apply_lora, load_model, token_logprobs

    torch.manual_seed(0)
    model, tok = load_model(None)
    model = apply_lora(model, r=4, alpha=8, dropout=0.0, target_modules=["q_proj", "v_proj"])
    rows = []
    k = len(tok("Q: 2+2? A:").input_ids)
    for reply, a in ((" 4, because two and two make four.", 1.0), (" 5, I guess so.", -1.0)):
        ids = tok("Q: 2+2? A:").input_ids + tok(reply).input_ids
        rows.append(Row(ids, [0] * k + [1] * (len(ids) - k), [0.0] * len(ids), [0.0] * k + [a] * (len(ids) - k)))
    batch = collate(rows, tok.pad_token_id)
    params = [p for p in model.parameters() if p.requires_grad]
    with torch.no_grad():
        batch.old_logprobs = token_logprobs(model, batch, autocast=False)[0]
    opt = torch.optim.SGD(params, lr=0.5)
    loss, _ = policy_loss(
        token_logprobs(model, batch, autocast=False)[0],
        batch.old_logprobs,
        batch.advantages,
        batch.mask,
        LossConfig(nfpo_n=4),
    )
    loss.backward()
    opt.step()
    results = {}
    for n in (1, 4):
        opt.zero_grad()
        logp = token_logprobs(model, batch, autocast=False)[0]
        loss, m = policy_loss(logp, batch.old_logprobs, batch.advantages, batch.mask, LossConfig(nfpo_n=n))
        loss.backward()
        grad = torch.cat([p.grad.flatten() for p in params])
        assert math.isfinite(float(loss.detach())) and torch.isfinite(grad).all()
        results[n] = (float(loss.detach()), grad.clone(), float(m["ratio"] / m["tokens"]))
    assert abs(results[1][2] - 1.0) > 1e-4  # the policy moved
    assert results[1][0] != pytest.approx(results[4][0], abs=1e-7)
    assert not torch.allclose(results[1][1], results[4][1])


def test_trainer_step_runs_the_forward_trace(length_env_id, tiny_model, tokenizer, tmp_path, monkeypatch):
    """`estimator: nfpo` in a real trainer step (tiny model, 2 minibatches): the prescribed `nfpo_n` reaches the loss
    (the forward trace runs with N = 3 on every micro-batch) and the update is finite."""
    from rlvr_gym.algorithms import losses
    from rlvr_gym.algorithms.advantages.base import _REGISTRY
    from rlvr_gym.algorithms.train_config import load_config
    from rlvr_gym.algorithms.trainer import Trainer

    monkeypatch.setitem(_REGISTRY, "nfpo", nfpo)  # the run-time name, until the entry point is in pyproject.toml
    seen = []
    real = losses.forward_trace
    monkeypatch.setattr(losses, "forward_trace", lambda lr, m, n, c=2.0: seen.append(n) or real(lr, m, n, c))
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
            "estimator": "nfpo",
            "estimator_params": {"n": 3},
            "minibatches": 2,
            "micro_batch_tokens": 256,
        }
    )
    record = Trainer(cfg, model=tiny_model, tokenizer=tokenizer).train_step()
    assert seen and set(seen) == {3}
    assert math.isfinite(record["update/pg_loss"]) and record["update/optimizer_steps"] == 2
