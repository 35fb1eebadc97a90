"""verl's data and reward shims in the main venv, which has no verl: they must work without it, and the agent loop
must say how to get it. The loop itself is tested against real verl in .venv-verl (test_isolated_trainers.py)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pandas as pd
import pytest

import rlvr_gym
from rlvr_gym.integrations.episode import CompletionScorer
from rlvr_gym.integrations.verl import agent_loop_yaml, compute_score, make_parquet

MATH = "rlvr/MathStarter-v0"


@pytest.mark.skipif(importlib.util.find_spec("verl") is not None, reason="verl is installed in this venv")
def test_agent_loop_without_verl_names_the_setup_script():
    code = "import rlvr_gym.integrations.verl as v; v.RlvrGymAgentLoop"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "ImportError" in proc.stderr and "scripts/setup_verl.sh" in proc.stderr, proc.stderr[-2000:]


def test_parquet_rows_name_tasks_and_hold_no_answers(tmp_path):
    frame = pd.read_parquet(make_parquet(MATH, 4, tmp_path / "d" / "train.parquet", seed=5))
    env = rlvr_gym.make(MATH)
    assert list(frame["agent_name"]) == ["rlvr_gym"] * 4 and list(frame["data_source"]) == [MATH] * 4
    for i, row in frame.iterrows():
        info = row["extra_info"]
        assert info["index"] == i and info["seed"] == 5 + i and info["env_id"] == MATH
        task = env.get_task(env.task_index_for_seed(5 + i))
        assert info["task_id"] == task.id and int(info["task_index"]) == env.task_index_for_seed(5 + i)
        assert row["reward_model"]["ground_truth"] == "" and list(row["prompt"]) == list(row["raw_prompt"])
        assert task.reference_actions[0] not in str(row.to_dict())


def test_compute_score_is_the_verifier_and_ignores_ground_truth(tmp_path):
    info = pd.read_parquet(make_parquet(MATH, 1, tmp_path / "t.parquet"))["extra_info"][0]
    answer = rlvr_gym.make(MATH).get_task(int(info["task_index"])).reference_actions[0]
    scorer = CompletionScorer(MATH)
    for text in [answer, "\\boxed{-12345}"]:
        for truth in ["", answer, text, None]:
            assert compute_score(MATH, text, truth, info) == scorer.verdict(info["task_index"], text).reward
    assert compute_score(MATH, answer, None, info) == 1.0
    with pytest.raises(ValueError, match="task_index is missing"):
        compute_score(MATH, answer, answer, {"env_id": MATH})


def test_agent_loop_yaml_has_one_entry(tmp_path):
    text = agent_loop_yaml(tmp_path / "agent_loop.yaml").read_text()
    assert text == "- name: rlvr_gym\n  _target_: rlvr_gym.integrations.verl_loop.RlvrGymAgentLoop\n"
