"""Config files validate, CLI overrides apply, and report() draws PNGs from a metrics file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlvr_gym.algorithms.report import report, report_command
from rlvr_gym.algorithms.train_config import load_config

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def test_quickstart_config_validates_and_overrides():
    cfg = load_config(CONFIGS / "quickstart-math.yaml", ["rollout.group_size=4", "loss.clip_high=0.3", "seed=7"])
    assert cfg.rollout.group_size == 4 and cfg.loss.clip_high == 0.3 and cfg.seed == 7
    assert cfg.model.lora is not None and cfg.estimator == "grpo"
    with pytest.raises(ValueError):
        load_config(CONFIGS / "quickstart-math.yaml", ["rollout.not_a_field=1"])


def test_report_writes_pngs(tmp_path):
    records = [{"step": 0, "eval/reward_mean": 0.1}] + [
        {"step": s, "reward_mean": 0.1 * s, "acr": 0.5, "kl_ref": 0.01 * s, "time/step_s": 2.0} for s in (1, 2, 3)
    ]
    records[-1]["eval/reward_mean"] = 0.4
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    summary = report(tmp_path)
    assert summary["eval_first"] == 0.1 and summary["eval_last"] == 0.4
    for f in summary["files"]:
        assert Path(f).stat().st_size > 1000
    assert report_command([str(tmp_path / "missing")]) == 1


def test_loss_settings_precedence():
    cfg = load_config(CONFIGS / "quickstart-math.yaml")
    # the estimator's prescription beats defaults; a value the user wrote beats the estimator
    assert cfg.loss.to_loss_config(64, {"clip_high": 0.4, "veto_eps": 0.2}).veto_eps == 0.2
    assert cfg.loss.to_loss_config(64, {"clip_high": 0.4}).clip_high == 0.28  # set in the YAML
    bare = load_config({"rollout": {"env": "rlvr/MathArithmetic-v0"}})
    assert bare.loss.to_loss_config(64, {"clip_high": 0.4}).clip_high == 0.4
