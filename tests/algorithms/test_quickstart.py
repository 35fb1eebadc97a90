"""The README's training path, end to end and short: train the quickstart config a few seeded steps, draw its
report, evaluate the saved adapter with `--agent hf:<adapter folder>`; and the format-hack signature (reward that
rises while nothing is solved) is caught where it exists and absent from the quickstart's run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlvr_gym.algorithms.metrics import hack_signature, read_metrics

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def _records(rewards: list[float], passes: list[float]) -> list[dict]:
    rows = [{"step": 0, "eval/pass_rate": 0.0}]
    pairs = enumerate(zip(rewards, passes, strict=True))
    rows += [{"step": i + 1, "reward_mean": r, "pass_rate": p} for i, (r, p) in pairs]
    return rows


def test_hack_signature_fires_on_reward_without_solving() -> None:
    """The old quickstart's run: reward 0.013 -> 0.2 from a format bonus, pass rate 0 throughout."""
    records = _records([0.013, 0.02, 0.05, 0.12, 0.18, 0.2], [0.0] * 6)
    assert "nothing was ever solved" in (hack_signature(records) or "")


@pytest.mark.parametrize(
    "rewards, passes",
    [
        ([0.1, 0.2, 0.3, 0.4], [0.1, 0.2, 0.3, 0.4]),  # solving: reward follows the pass rate
        ([0.2, 0.2, 0.2, 0.2], [0.0] * 4),  # a flat floor is not a rise (the floor stage of check-env owns that)
        ([0.3, 0.2, 0.1, 0.0], [0.0] * 4),
        ([0.1], [0.0]),
    ],
)
def test_hack_signature_quiet_otherwise(rewards: list[float], passes: list[float]) -> None:
    assert hack_signature(_records(rewards, passes)) is None


def test_hack_signature_counts_an_eval_pass() -> None:
    records = _records([0.0, 0.1, 0.2], [0.0] * 3) + [{"step": 3, "eval/pass_rate": 0.05}]
    assert hack_signature(records) is None


@pytest.mark.slow
def test_readme_train_report_eval_adapter_sequence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`rlvr-gym train configs/quickstart-math.yaml` (2 seeded steps of it), `rlvr-gym report <run_dir>`, then
    `rlvr-gym eval ... --agent hf:<run_dir>/checkpoints/step-000002/adapter`: the adapter folder alone names its base."""
    from rlvr_gym.cli import main

    run_dir = tmp_path / "quickstart"
    overrides = [
        f"run_dir={run_dir}",
        "steps=2",
        "rollout.prompts_per_step=4",
        "rollout.group_size=4",
        "eval.num_tasks=4",
        "eval.every=2",
        "checkpoint_every=2",
        "progress=false",
        "tensorboard=false",
        "model.threads=1",
    ]
    argv = ["train", str(CONFIGS / "quickstart-math.yaml")] + [a for o in overrides for a in ("--set", o)]
    assert main(argv) == 0
    records = read_metrics(run_dir / "metrics.jsonl")
    train = [r for r in records if "reward_mean" in r]
    assert len(train) == 2
    # The quickstart pays only for solving: every rewarded rollout passed, and no reward rises without a pass.
    assert all(r["reward_mean"] == pytest.approx(r["pass_rate"]) for r in train)
    assert hack_signature(records) is None
    assert any(r["pass_rate"] > 0 for r in train), "the embedded model solves some sums from the first step"
    low, high = records[0]["eval/pass_rate_low"], records[0]["eval/pass_rate_high"]
    assert 0.0 <= low <= records[0]["eval/pass_rate"] <= high <= 1.0

    assert main(["report", str(run_dir)]) == 0
    assert (run_dir / "report" / "curves.png").stat().st_size > 1000
    capsys.readouterr()

    adapter = run_dir / "checkpoints" / "step-000002" / "adapter"
    out = tmp_path / "eval" / "episodes.jsonl"
    code = main(
        [
            "eval",
            "rlvr/MathAddition-v0",
            "--agent",
            f"hf:{adapter}",
            "-n",
            "2",
            "--env-arg",
            "split=eval",
            "--temperature",
            "0",
            "--no-progress",
            "-o",
            str(out),
        ]
    )
    assert code == 0
    episodes = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(episodes) == 2 and all(e["error"] is None for e in episodes)
    manifest = json.loads((out.parent / "summary.json").read_text())
    assert manifest["episodes"] == 2
