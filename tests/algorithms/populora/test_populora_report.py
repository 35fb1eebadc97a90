"""The results tables: counts rebuilt from the run's settings, Wilson intervals, the curves PNG."""

from __future__ import annotations

import json

import pytest

from rlvr_gym.algorithms.populora.report import arm_table, load_arm, plot


def _row(gen: int, valid: float, held: float) -> dict:
    return {
        "generation": gen,
        "valid_proposal_rate": valid,
        "learnability": 0.125,
        "rewards": {"t/propose": -1.0, "s/solve": -0.25},
        "train_solve_rate": {"s": 0.25},
        "held_solve_rate": {"s": held},
        "held_solve_rate_start": {"s": 0.0} if gen == 0 else {},
        "updates": {"t": 0, "s": 2},
        "delta_w": {"t": 0.25, "s": 0.5},
        "buffer_size": 34 + gen,
        "buffer_added": 1,
        "wall_s": 60.0,
    }


def test_table_counts_and_intervals(tmp_path):
    settings = {
        "teachers": 1,
        "students": 1,
        "evolve": False,
        "task_types": ["deduction", "abduction"],
        "proposals_per_type": 2,
        "solves_per_type": 2,
        "steps_per_generation": 2,
        "held_per_type": 2,
    }
    log_dir = tmp_path / "run" / "population"
    log_dir.mkdir(parents=True)
    rows = [_row(0, 0.125, 0.25), _row(1, 0.25, 0.5)]
    (log_dir / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(FileNotFoundError, match="settings.json"):
        load_arm(str(log_dir))
    (log_dir / "settings.json").write_text(json.dumps(settings))
    cfg, loaded = load_arm(str(log_dir))
    assert loaded == rows
    table = arm_table("1T-1S", cfg, loaded)
    assert "1/8 = 0.125 [0.022, 0.471]" in table  # 2 types x 2 proposals x 2 steps = 8 per generation
    assert "s 2/4 = 0.500" in table and "(before training: s 0/4)" in table
    assert "valid proposals 3/16 = 0.188" in table and "buffer solve rate 4/16 = 0.250" in table
    assert "updates taken / possible: t 0/4, s 4/4" in table and "| 0.125 |" in table
    # mean reward -0.25 on 8 answers with 2 right: 2 - 0.5k - (6 - k) = -2 gives k = 4 wrong, 6 well-formed
    assert "s 6/8 = 0.750" in table and "well-formed solve answers 12/16 = 0.750" in table
    plot({"1T-1S": loaded}, tmp_path / "curves.png")
    assert (tmp_path / "curves.png").read_bytes()[:4] == b"\x89PNG"
