"""Distillation rows (plain prompt + unchanged response, weight A_i) and the distillation loss."""

from __future__ import annotations

import math

import pytest
import torch

from rlvr_gym.algorithms.nudge.allocation import nudge_meta
from rlvr_gym.algorithms.nudge.distill import distill_loss, distill_rows
from rlvr_gym.algorithms.nudge.trainer import NudgeTrainer
from rlvr_gym.algorithms.train_config import load_config

from .conftest import nudge_data


def test_distill_loss_by_hand():
    logp = torch.tensor([[-1.0, -3.0, 0.0], [-2.0, 0.0, 0.0]], requires_grad=True)
    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    adv = torch.tensor([[0.5, 0.5, 0.0], [-1.0, 0.0, 0.0]])
    loss, metrics = distill_loss(logp, mask, adv, coef=0.1, normaliser=2.0)
    # rows: A=0.5 * mean(-1,-3)=-2 -> -1.0 ; A=-1 * -2 -> 2.0 ; -0.1 * (1.0) / 2 = -0.05
    assert loss.item() == pytest.approx(-0.05)
    loss.backward()
    # d/dlogp = -coef * A / |y| / normaliser at masked positions
    torch.testing.assert_close(logp.grad, torch.tensor([[-0.0125, -0.0125, 0.0], [0.05, 0.0, 0.0]]))
    assert metrics["distill_logp"].item() == pytest.approx(-4.0)
    assert metrics["distill_loss"].item() == pytest.approx(-0.1)


@pytest.fixture()
def trainer(length_env_id, tiny_model, tokenizer, tmp_path):
    return NudgeTrainer(load_config(nudge_data(length_env_id, tmp_path)), model=tiny_model, tokenizer=tokenizer)


def test_distill_rows_strip_the_context_and_keep_the_response(trainer):
    episodes = trainer.collect_train_episodes([0, 1], seed=11)
    assert len(episodes) == 8 and len({ep.group_id for ep in episodes}) == 2
    hinted = [i for i, ep in enumerate(episodes) if nudge_meta(ep)["context_id"] is not None]
    dropped = [i for i, ep in enumerate(episodes) if nudge_meta(ep)["context_id"] is None]
    assert hinted and dropped  # seed chosen so both kinds occur
    adv = trainer.advantages(episodes)
    rows = distill_rows(episodes, adv, trainer.render_plain, trainer.cfg.max_seq_len)
    assert {r.episode for r in rows} == {i for i in hinted if adv.episode[i] != 0}
    plain_by_problem = {nudge_meta(episodes[i])["problem_id"]: episodes[i].turns[0].prompt_token_ids for i in dropped}
    for row in rows:
        ep = episodes[row.episode]
        turn = ep.turns[0]
        n_prompt = len(row.input_ids) - len(turn.token_ids)
        assert row.input_ids[n_prompt:] == turn.token_ids  # response ids unchanged
        assert row.loss_mask == [0] * n_prompt + [1] * len(turn.token_ids)
        assert all(a == pytest.approx(adv.episode[row.episode]) for a in row.advantages[n_prompt:])
        hint = nudge_meta(ep)["hint"]
        assert hint in trainer.tokenizer.decode(turn.prompt_token_ids)
        assert hint not in trainer.tokenizer.decode(row.input_ids[:n_prompt])
        problem = nudge_meta(ep)["problem_id"]
        if problem in plain_by_problem:  # exactly the prompt a dropped rollout of the same problem saw
            assert row.input_ids[:n_prompt] == plain_by_problem[problem]


def test_one_step_with_distillation_moves_lora_differently(length_env_id, tokenizer, tiny_model, tmp_path):
    import copy

    from rlvr_gym.algorithms.modeling import trainable_state

    states = []
    for coef in (0.0, 1.0):
        cfg = load_config(nudge_data(length_env_id, tmp_path / str(coef), distill_coef=coef, pass_at_k=0))
        t = NudgeTrainer(cfg, model=copy.deepcopy(tiny_model), tokenizer=tokenizer)
        record = t.train_step()
        assert math.isfinite(record["update/pg_loss"]) and record["update/rows"] > 0
        assert (record.get("update/extra_rows", 0) > 0) == (coef > 0)
        if coef:
            assert math.isfinite(record["update/distill_logp"]) and record["update/distill_logp"] < 0
        states.append(trainable_state(t.model))
    lora_b = [n for n in states[0] if "lora_B" in n]
    assert any(not torch.equal(states[0][n], states[1][n]) for n in lora_b)
