"""`rlvr-gym trainer-data`: one command writes each trainer's task dataset; every format names the same tasks."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from rlvr_gym.cli import main


@pytest.mark.parametrize("fmt", ["verl", "nemo-gym", "trl"])
def test_trainer_data_formats_name_the_same_tasks(fmt, tmp_path, capsys):
    out = tmp_path / f"data.{fmt}"
    assert main(["trainer-data", fmt, "rlvr/Math-v0", "-n", "4", "-o", str(out), "--env-kwargs", '{"split": "eval"}']) == 0
    if fmt == "verl":
        ids = [info["task_id"] for info in pd.read_parquet(out)["extra_info"]]
    elif fmt == "nemo-gym":
        ids = [json.loads(line)["task_id"] for line in out.read_text().splitlines()]
    else:
        from datasets import load_from_disk

        ids = load_from_disk(str(out))["task_id"]
    assert ids == [f"math/eval/{i}" for i in range(4)]
    assert "4 tasks" in capsys.readouterr().out


def test_trainer_data_rejects_bad_env_kwargs(tmp_path):
    with pytest.raises(SystemExit):
        main(["trainer-data", "verl", "rlvr/Math-v0", "-n", "1", "-o", str(tmp_path / "x"), "--env-kwargs", "[1]"])
