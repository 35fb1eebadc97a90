"""Distillation rows (plain prompt + unchanged response, weight A_i) and the distillation loss."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from rlvr_gym.algorithms.advantages import AdvantageOutput
from rlvr_gym.algorithms.batch import collate
from rlvr_gym.algorithms.nudge.allocation import META_KEY, nudge_meta
from rlvr_gym.algorithms.nudge.distill import distill_loss, distill_rows
from rlvr_gym.algorithms.nudge.trainer import NudgeTrainer
from rlvr_gym.algorithms.train_config import load_config
from rlvr_gym.types import Episode, Turn

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


PLAIN = [7, 8]  # the rendered plain prompt x0 of the problem


def nudge_episode(context: int | None, prompt: list[int], gen: list[int]) -> Episode:
    meta = {"problem_id": "p", "context_id": context, "plain_prompt": [{"role": "user", "content": "q"}]}
    turn = Turn(index=0, observation=[], action="", prompt_token_ids=prompt, token_ids=gen)
    return Episode(
        episode_id="e",
        env_id="x",
        task_id="t",
        group_id="p",
        total_reward=0.0,
        turns=[turn],
        task_metadata={META_KEY: meta},
    )


@pytest.mark.parametrize(("over", "expected_rows", "expected_loss"), [("minibatch", 3, 0.1), ("hinted", 2, 0.05)])
def test_distillation_is_a_mean_over_the_minibatch_rows_as_upstream(over, expected_rows, expected_loss):
    """The worked example of nudge/distill.py's docstring: two hinted rows (scored under x0, not their hinted
    prompt), one dropped row (its own prompt is x0), one zero-advantage row (no row, as in the surrogate)."""
    episodes = [
        nudge_episode(0, [1, 2, 3], [10, 11]),  # hinted, A = 1.0, log-probs under x0 (-1, -3)
        nudge_episode(1, [1, 2, 4], [12]),  # hinted, A = -0.5, (-2)
        nudge_episode(None, PLAIN, [13, 14]),  # dropped, A = 2.0, (-0.5, -1.5)
        nudge_episode(None, PLAIN, [15]),  # A = 0: no gradient, no row
    ]
    adv = AdvantageOutput(episode=np.array([1.0, -0.5, 2.0, 0.0]))
    rows = distill_rows(episodes, adv, lambda messages: list(PLAIN), over=over)
    assert len(rows) == expected_rows
    assert all(r.input_ids[:2] == PLAIN for r in rows)  # every row is scored under x0
    batch = collate(rows)
    logp = torch.zeros_like(batch.mask)
    by_response = {10: [-1.0, -3.0], 12: [-2.0], 13: [-0.5, -1.5]}
    for i, row in enumerate(rows):  # predicted position p - 1 holds the log-prob of token p
        logp[i, 1 : 1 + len(by_response[row.input_ids[2]])] = torch.tensor(by_response[row.input_ids[2]])
    loss, _ = distill_loss(logp, batch.mask, batch.advantages, coef=0.1, normaliser=float(len(rows)))
    assert loss.item() == pytest.approx(expected_loss)


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
    assert {r.episode for r in distill_rows(episodes, adv, trainer.render_plain, over="minibatch")} == {
        i for i in range(len(episodes)) if adv.episode[i] != 0
    }
    rows = distill_rows(episodes, adv, trainer.render_plain, trainer.cfg.max_seq_len, over="hinted")
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
