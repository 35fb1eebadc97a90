"""`rlvr-gym eval --backend ray`: the same episodes as the local runner, from the command line."""

from __future__ import annotations

import json

import pytest

from rlvr_gym.cli import main


def _verdicts(path):
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return sorted((r["episode_id"], r["outcome"], json.dumps(r["verdict"], sort_keys=True)) for r in rows)


def test_a_ray_address_without_the_ray_backend_is_refused(tmp_path, capsys):
    args = ["eval", "rlvr/MathArithmetic-v0", "--agent", "oracle", "-n", "1", "--no-progress"]
    assert main([*args, "--ray-address", "127.0.0.1:6379", "-o", str(tmp_path / "e.jsonl")]) != 0
    assert "needs the Ray backend" in capsys.readouterr().err


@pytest.mark.heavy  # starts a private Ray (~10 s); the Ray runner itself is covered by test_ray_backend.py
def test_eval_on_ray_equals_eval_here(tmp_path):
    args = ["eval", "rlvr/MathArithmetic-v0", "--agent", "oracle", "-n", "4", "--no-progress"]
    assert main([*args, "-o", str(tmp_path / "local.jsonl")]) == 0
    assert main([*args, "--backend", "ray", "-o", str(tmp_path / "ray.jsonl")]) == 0
    assert _verdicts(tmp_path / "local.jsonl") == _verdicts(tmp_path / "ray.jsonl")
