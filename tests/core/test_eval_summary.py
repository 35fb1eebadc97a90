"""The eval summary shows only what varies, its intervals are right, and `eval --json` is summary.json on stdout."""

from __future__ import annotations

import json

import pytest

from rlvr_gym.cli import main, print_summary
from rlvr_gym.summary import mean_interval, summarize, summarize_by, t_quantile_975, wilson_interval
from rlvr_gym.types import Episode, EpisodeError, ErrorKind, Turn, Verdict

# Keys other code and tests read from summary.json; the summary may grow but never lose or rename these.
STABLE_KEYS = {
    "episodes", "rewarded", "groups", "mean_reward", "std_reward", "pass_rate", "pass_at_group", "components",
    "mean_turns", "invalid_action_rate", "outcomes", "invalid_rate", "error_count", "errors", "error_rate",
}  # fmt: skip


def episode(i: int, reward: float, *, family: str = "a", error: bool = False, **components: float) -> Episode:
    verdict = Verdict(reward=reward, passed=reward == 1.0, components={"correct": reward, **components})
    return Episode(
        episode_id=f"e{i}",
        env_id="rlvr/Test-v0",
        task_id=f"t{i}",
        group_id=f"g{i}",
        turns=[Turn(index=0, observation=[], action="x")],
        verdict=None if error else verdict,
        error=EpisodeError(kind=ErrorKind.ENV_ERROR, message="boom") if error else None,
        task_metadata={"family": family, "split": "eval", "difficulty": 1},
    )


def printed(episodes: list[Episode], capsys) -> str:
    summary = summarize(episodes)
    summary["by"] = summarize_by(episodes)
    print_summary("run", summary)
    return capsys.readouterr().out


def test_wilson_interval_hand_worked():
    """8 of 10: p = 0.8, z^2/n = 0.38415, center 0.71674, half width 0.22658 (see `wilson_interval`)."""
    assert wilson_interval(8, 10) == pytest.approx([0.4902, 0.9433], abs=1e-4)
    assert wilson_interval(0, 5) == pytest.approx([0.0, 0.4345], abs=1e-4)  # not the collapsed [0, 0]
    assert wilson_interval(10, 10)[1] == 1.0 and wilson_interval(0, 0) is None


def test_mean_interval_hand_worked():
    """[0.5, 0.7, 0.9]: mean 0.7, s 0.2, t(0.975, 2) 4.3027, half width 4.3027 * 0.2 / sqrt(3) = 0.49683."""
    assert mean_interval([0.5, 0.7, 0.9]) == pytest.approx([0.2032, 1.1968], abs=1e-4)
    assert mean_interval([1.0]) is None and mean_interval([]) is None
    assert mean_interval([1.0, 1.0]) == [1.0, 1.0]


def test_t_quantiles_join_the_table_to_the_expansion():
    assert t_quantile_975(1) == 12.7062 and t_quantile_975(30) == 2.0423
    assert t_quantile_975(31) == pytest.approx(2.0395, abs=1e-4)  # exact: 2.03951
    assert t_quantile_975(120) == pytest.approx(1.9799, abs=1e-4)  # exact: 1.97993


def test_summary_keeps_its_keys_and_adds_intervals():
    summary = summarize([episode(i, float(i < 8)) for i in range(10)])
    assert STABLE_KEYS <= summary.keys()
    assert summary["pass_count"] == 8 and summary["pass_rate_ci"] == pytest.approx([0.4902, 0.9433], abs=1e-4)
    assert summary["mean_reward_ci"] == pytest.approx(mean_interval([1.0] * 8 + [0.0] * 2))


def test_single_family_run_prints_no_breakdown_and_no_reward_copies(capsys):
    out = printed([episode(i, float(i % 2), exact=float(i % 2)) for i in range(6)], capsys)
    assert "by " not in out  # one family, one split, one difficulty: nothing to break down
    assert "components (mean)" not in out  # correct and exact are the reward itself
    assert "equal to the reward on every episode (not repeated): correct, exact" in out
    for row in ("episodes", "scored", "invalid", "error", "mean_reward", "pass_rate", "95% CI"):
        assert row in out
    assert "pass_at_group" not in out and "mean_turns" not in out  # group size 1, one turn each


def test_two_family_run_prints_that_breakdown_only(capsys):
    episodes = [episode(i, float(i % 2), family="ab"[i % 2], style=0.5, lint=0.5) for i in range(6)]
    out = printed([*episodes, episode(6, 0.0, error=True)], capsys)
    assert "by family" in out and "by split" not in out and "by difficulty" not in out
    assert "lint = style" in out  # two components always equal: one row
    assert "error (env_error)" in out


def test_eval_json_is_summary_json_and_alone_on_stdout(tmp_path, capsys, echo_env_id):
    out = tmp_path / "run" / "episodes.jsonl"
    args = ["eval", echo_env_id, "--agent", "oracle", "-n", "6", "-o", str(out), "--no-progress", "--json"]
    assert main(args) == 0
    printed_json = json.loads(capsys.readouterr().out)
    assert printed_json == json.loads((out.parent / "summary.json").read_text())
    assert printed_json["pass_rate"] == 1.0 and printed_json["pass_rate_ci"][1] == 1.0
    assert set(printed_json["by"]["difficulty"]) == {"0", "1"}


def test_eval_tables_break_down_what_varies(tmp_path, capsys, echo_env_id):
    out = tmp_path / "run" / "episodes.jsonl"
    assert main(["eval", echo_env_id, "--agent", "oracle", "-n", "6", "-o", str(out), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "by difficulty" in text and "mean_reward" in text  # the echo env alternates difficulty 0 and 1
