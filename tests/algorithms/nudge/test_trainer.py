"""NudgeRL through the trainer selector: config checks at load time, one real training step, the comparison."""

from __future__ import annotations

import copy
import json
import math

import pytest

from rlvr_gym.algorithms.metrics import read_metrics
from rlvr_gym.algorithms.nudge.compare import ARMS, arm_config, compare
from rlvr_gym.algorithms.nudge.trainer import NudgeTrainer
from rlvr_gym.algorithms.train_config import load_config
from rlvr_gym.algorithms.trainer import Trainer, train, trainer_class

from .conftest import nudge_data


def test_selector_resolves_registered_trainers():
    assert trainer_class("nudge") is NudgeTrainer and trainer_class("policy_gradient") is Trainer
    with pytest.raises(ValueError, match="known"):
        trainer_class("no-such-method")


@pytest.mark.parametrize(
    "override",
    [
        "algorithm.p_dorp=0.3",  # misspelt nudge key
        "rollout.group_size=3",  # N != M x K
        "estimator=grpo",  # the nudge trainer needs the nudge estimator
        "algorithm.name=no-such-method",
    ],
)
def test_bad_algorithm_settings_fail_at_load_time(length_env_id, tmp_path, override):
    load_config(nudge_data(length_env_id, tmp_path))  # the base is valid
    with pytest.raises(ValueError):
        load_config(nudge_data(length_env_id, tmp_path), [override])


def test_train_runs_one_nudge_step_through_the_selector(length_env_id, tiny_model, tokenizer, tmp_path):
    result = train(nudge_data(length_env_id, tmp_path), model=tiny_model, tokenizer=tokenizer, resume=False)
    assert result["step"] == 1
    first, step = read_metrics(tmp_path / "metrics.jsonl")
    assert first["step"] == 0 and step["step"] == 1
    # 2 problems x 4 rollouts, some hinted (distilled), some dropped, grouped per problem
    assert step["update/rows"] == 8 and 0 < step["adv/nudge/hinted_fraction"] < 1
    # upstream's distillation mean runs over every row of the minibatch, hinted (under x0) and dropped
    assert step["update/extra_rows"] == step["update/rows"] and math.isfinite(step["update/distill_logp"])
    for record in (first, step):
        assert record["eval/k"] == 2 and 0 <= record["eval/pass@1"] <= record["eval/pass@k"] <= 1


def test_arms_differ_only_in_the_method_and_scale_their_rollouts(length_env_id, tmp_path):
    base = load_config(nudge_data(length_env_id, tmp_path))
    grpo, dapo, nudge = (arm_config(base, arm, 2, 7, tmp_path) for arm in ARMS)
    assert (grpo.algorithm.name, grpo.estimator, grpo.rollout.group_size) == ("policy_gradient", "grpo", 8)
    assert grpo.rollout.dynamic_sampling is None and grpo.loss == base.loss and grpo.seed == 7
    assert dapo.estimator == "dapo" and dapo.rollout.dynamic_sampling is not None
    assert dapo.estimator_params == {"overlong_buffer": 1, "max_response_tokens": 6}  # a quarter of the budget
    assert (dapo.loss.clip_high, dapo.loss.aggregation) == (0.28, "token_mean")
    assert nudge.algorithm.options()["rollouts_per_context"] == 4 and nudge.rollout.group_size == 8
    for c in (grpo, dapo, nudge):
        assert (c.model, c.eval, c.optim, c.rollout.env) == (base.model, base.eval, base.optim, base.rollout.env)


def test_compare_runs_every_arm_at_one_budget_and_writes_plot_and_summary(
    length_env_id, tiny_model, tokenizer, tmp_path
):
    # steps=0: every arm's config, trainer and eval, the plot and the summary, without training (above)
    data = {**nudge_data(length_env_id, tmp_path / "unused", steps=0, pass_at_k=0), "max_gen_tokens": 50}
    summary = compare(
        data, tmp_path / "cmp", scales=[1, 2], model_loader=lambda: (copy.deepcopy(tiny_model), tokenizer)
    )
    assert set(summary["runs"]) == {f"{arm}-x{s}-seed5" for arm in ARMS for s in (1, 2)}
    assert {r["rollouts_per_problem"] for r in summary["runs"].values()} == {4, 8}
    assert set(summary["differences"]) == {f"{a}-x{s}-seed5 - grpo" for a in ("dapo", "nudge") for s in (1, 2)}
    assert all(isinstance(d["within_noise"], bool) for d in summary["differences"].values())
    assert summary["table"]["grpo-x1"]["finals"] == [summary["runs"]["grpo-x1-seed5"]["final"]["eval/pass_rate"]]
    assert (tmp_path / "cmp" / "compare.png").stat().st_size > 5_000
    assert json.loads((tmp_path / "cmp" / "summary.json").read_text())["budget_gen_tokens"] == 50
    with pytest.raises(ValueError, match="max_gen_tokens"):
        compare(nudge_data(length_env_id, tmp_path / "unused"), tmp_path / "cmp2")
