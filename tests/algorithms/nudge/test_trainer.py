"""NudgeRL through the trainer selector: config checks at load time, one real training step, the comparison."""

from __future__ import annotations

import copy
import json
import math

import pytest

from rlvr_gym.algorithms.metrics import read_metrics
from rlvr_gym.algorithms.nudge.compare import compare
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
    assert step["update/extra_rows"] > 0 and math.isfinite(step["update/distill_logp"])
    for record in (first, step):
        assert record["eval/k"] == 2 and 0 <= record["eval/pass@1"] <= record["eval/pass@k"] <= 1


def test_compare_runs_both_arms_and_writes_plot_and_summary(length_env_id, tiny_model, tokenizer, tmp_path):
    # steps=0: the arms' configs, trainers and pass@k evals, the plot and the summary, without training (above)
    summary = compare(
        nudge_data(length_env_id, tmp_path / "unused", steps=0),
        tmp_path / "cmp",
        model_loader=lambda: (copy.deepcopy(tiny_model), tokenizer),
    )
    assert set(summary["arms"]) == {"nudge", "grpo"}
    assert summary["arms"]["grpo"]["algorithm"] == "policy_gradient" and summary["arms"]["grpo"]["estimator"] == "grpo"
    assert {a["rollouts_per_problem"] for a in summary["arms"].values()} == {4}
    for arm in summary["arms"].values():
        assert set(arm["curve"]["eval/pass@k"]) == {0} and arm["final"]["eval/pass@k"] is not None
    assert all(isinstance(d["within_noise"], bool) for d in summary["differences"].values())
    assert (tmp_path / "cmp" / "compare.png").stat().st_size > 5_000
    assert json.loads((tmp_path / "cmp" / "summary.json").read_text())["k"] == 2
