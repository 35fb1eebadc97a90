"""`rlvr-gym verify`: every id format, hostile files read line by line, strict types, eval outputs re-scored
exactly (issue #14 item 5)."""

import json

import pytest

import rlvr_gym
from rlvr_gym import EnvUnavailable
from rlvr_gym.cli import main


def run_verify(env_id, path, *extra):
    code = main(["verify", env_id, str(path), *extra])
    scored = [json.loads(line) for line in path.with_suffix(".scored.jsonl").read_text().splitlines()]
    summary = json.loads(path.with_name(path.stem + ".scored.summary.json").read_text())
    return code, scored, summary


def test_bom_blank_broken_and_mistyped_lines_are_reported_the_rest_scored(trap_env_ids, tmp_path):
    lines = [
        json.dumps({"task_index": 3, "output": "3"}),  # 1 scored, passes
        "",  # 2 blank
        "{not json",  # 3
        json.dumps([1, 2]),  # 4 an array row
        json.dumps("just a string"),  # 5
        json.dumps({"task_index": 1.9, "output": "1"}),  # 6 a float index is not an index
        json.dumps({"task_index": True, "output": "1"}),  # 7 nor is a bool
        json.dumps({"task_index": 2, "outputs": "22"}),  # 8 a string is not a list of outputs
        json.dumps({"task_id": "trap/train/5", "output": "5"}),  # 9 an id with slashes
        json.dumps({"task_index": 4, "output": "four"}),  # 10 scored as invalid
        json.dumps({"task_index": 99999999, "output": "1"}),  # 11 out of range
        json.dumps({"task_index": 0, "output": "0", "extra": {"kept": True}}),  # 12
    ]
    path = tmp_path / "outputs.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + "\n".join(lines).encode() + b"\n")
    code, scored, summary = run_verify(trap_env_ids["trap"], path, "--env-arg", "size=10")
    assert code == 1  # some rows could not be scored
    assert [r["line"] for r in scored] == [1, 9, 10, 12]
    assert [r["verdict"]["passed"] for r in scored] == [True, True, False, True]
    assert scored[2]["outcome"] == "invalid" and scored[3]["extra"] == {"kept": True}
    problems = {p["line"]: p["kind"] for p in summary["problems"]}
    assert problems == {
        3: "not_json",
        4: "not_object",
        5: "not_object",
        6: "invalid_row",
        7: "invalid_row",
        8: "invalid_row",
        11: "unknown_task",
    }
    assert summary["rows"] == 11 and summary["rewarded"] == 4 and summary["blank_lines"] == 1
    assert summary["mean_reward"] == 0.75 and summary["outcomes"] == {"scored": 3, "invalid": 1, "error": 7}


def test_all_good_rows_exit_zero_and_multi_turn_outputs(trap_env_ids, tmp_path):
    path = tmp_path / "o.jsonl"
    rows = [{"task_index": 3, "outputs": ["1", "3"]}, {"task_id": "trap/train/7", "output": "8"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, scored, _ = run_verify(trap_env_ids["trap"], path, "--env-arg", "max_attempts=2")
    assert code == 0 and [r["reward"] for r in scored] == [0.5, 0.0]


def _env_or_skip(env_id):
    try:
        rlvr_gym.make(env_id)
    except (EnvUnavailable, ImportError) as exc:
        pytest.skip(f"{env_id}: {exc}")


@pytest.mark.parametrize(
    "env_id,agent,extra",
    [
        ("rlvr/Trap-v0", "constant:3", ["--env-arg", "max_attempts=2"]),
        ("rlvr/Trap-v0", "oracle", []),
        ("rlvr/Math-v0", "oracle", []),
        ("rlvr/Math-v0", "constant:42", []),
        ("rlvr/Maze-v0", "oracle", []),
        ("rlvr/ToolDepth-v0", "oracle", []),
    ],
)
def test_reverifying_an_eval_output_reproduces_its_rewards(env_id, agent, extra, tmp_path):
    _env_or_skip(env_id)
    out = tmp_path / "episodes.jsonl"
    assert main(["eval", env_id, "--agent", agent, "-n", "6", "-o", str(out), "--no-progress", *extra]) in (0, 1)
    episodes = [json.loads(line) for line in out.read_text().splitlines()]
    code, scored, summary = run_verify(env_id, out)  # env arguments come from the run manifest
    assert code == 0, summary["problems"]
    expected = {e["episode_id"]: e["verdict"]["reward"] for e in episodes}
    assert {r["episode_id"]: r["reward"] for r in scored} == expected
    assert summary["mean_reward"] == json.loads((tmp_path / "summary.json").read_text())["mean_reward"]
