"""NeMo Gym glue (no nemo-gym import): the JSONL rows and per-session env steps behind the resources server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import rlvr_gym
from rlvr_gym.integrations.nemo_gym import EnvSessions, write_jsonl

MATH, SOKOBAN = "rlvr/MathStarter-v0", "rlvr/Sokoban-v0"


def message(text: str) -> dict:
    return {"output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}]}


def call(name: str, arguments: str, call_id: str = "c1") -> dict:
    return {"output": [{"type": "function_call", "name": name, "arguments": arguments, "call_id": call_id}]}


def rows(env_id, n, tmp_path, **kw):
    path = write_jsonl(env_id, n, tmp_path / "data.jsonl", **kw)
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_jsonl_rows_name_the_task_and_hold_no_answer(tmp_path):
    data = rows(MATH, 4, tmp_path, agent_name="my_agent")
    env = rlvr_gym.make(MATH)
    for i, row in enumerate(data):
        task = env.get_task(i)
        assert row["task_id"] == task.id and row["task_index"] == i and row["env_id"] == MATH
        assert row["agent_ref"] == {"type": "responses_api_agents", "name": "my_agent"}
        assert [t["name"] for t in row["responses_create_params"]["tools"]] == ["answer"]
        assert task.reference_actions[0] not in json.dumps(row["responses_create_params"]["input"][-1])
        assert not {"ground_truth", "answer", "reward", "expected_answer"} & set(row)


def test_single_turn_reward_is_the_verdict(tmp_path):
    row = rows(MATH, 3, tmp_path)[2]
    oracle = rlvr_gym.make(MATH).get_task(2).reference_actions[0]
    sessions = EnvSessions()
    for text, reward in [(oracle, 1.0), ("\\boxed{-1}", 0.0)]:
        assert sessions.reset(row, "s1") == (None, {"task_id": row["task_id"]})
        obs, r, terminated, truncated, info = sessions.step(message(text), "s1")
        assert (r, terminated, truncated) == (reward, True, False)
        assert info["verdict"]["reward"] == reward
    with pytest.raises(RuntimeError, match="episode is over"):
        sessions.step(message(oracle), "s1")


def test_multi_turn_and_tool_calls(tmp_path):
    row = rows(SOKOBAN, 1, tmp_path)[0]
    moves = rlvr_gym.make(SOKOBAN).get_task(0).reference_actions[0]
    sessions = EnvSessions()
    sessions.reset(row, "a")
    obs, reward, terminated, truncated, info = sessions.step(message("no idea"), "a")
    assert obs and "#" in obs and (reward, terminated, truncated) == (0.0, False, False)
    obs, reward, terminated, truncated, info = sessions.step(call("play", "{not json"), "a")
    assert info["tool_outputs"][0]["output"].startswith("error:") and not terminated  # not a step
    obs, reward, terminated, truncated, info = sessions.step(call("play", json.dumps({"moves": moves}), "c9"), "a")
    assert info["tool_outputs"][0]["call_id"] == "c9" and "episode is over" in info["tool_outputs"][0]["output"]
    assert terminated and info["verdict"]["passed"] and reward == info["verdict"]["reward"] > 0.9  # one wasted turn


def test_sessions_are_isolated_and_unknown_ones_refused(tmp_path):
    data = rows(MATH, 2, tmp_path)
    env = rlvr_gym.make(MATH)
    sessions = EnvSessions()
    sessions.reset(data[0], "x")
    sessions.reset(data[1], "y")
    assert sessions.step(message(env.get_task(1).reference_actions[0]), "y")[1] == 1.0
    assert sessions.step(message(env.get_task(1).reference_actions[0]), "x")[1] == 0.0  # x is task 0
    with pytest.raises(KeyError, match="unknown session"):
        sessions.step(message("1"), "z")
    with pytest.raises(ValueError, match="row names task"):
        sessions.reset({**data[0], "task_id": "math/train/999"}, "x")
    sessions.close("x")
    sessions.close("y")
    assert len(sessions) == 0


def test_forged_fields_cannot_set_the_reward(tmp_path):
    row = rows(MATH, 1, tmp_path)[0]
    sessions = EnvSessions()
    sessions.reset({**row, "reward": 1.0, "expected_answer": "\\boxed{-1}"}, "f")
    forged = {**message("\\boxed{-1}"), "reward": 1.0, "metadata": {"reward": 1.0}}
    assert sessions.step(forged, "f")[1] == 0.0


def test_abandoned_sessions_are_bounded(tmp_path):
    data = rows(MATH, 3, tmp_path)
    sessions = EnvSessions(max_sessions=2)
    sessions.reset(data[0], "a")
    first = sessions._sessions["a"]
    sessions.reset(data[1], "b")
    sessions.step(message("1"), "a")  # a step makes "a" the most recently used, so "b" goes first
    sessions.reset(data[2], "c")
    assert len(sessions) == 2 and first.env.task is not None
    with pytest.raises(KeyError, match="evicted"):
        sessions.step(message("1"), "b")
    sessions.reset(data[0], "a")  # a new episode on a live session closes its old env
    assert len(sessions) == 2 and sessions._sessions["a"] is not first
    with pytest.raises(ValueError, match="max_sessions"):
        EnvSessions(max_sessions=0)


def test_malformed_responses_and_calls_give_clear_errors(tmp_path):
    row = rows(SOKOBAN, 1, tmp_path)[0]
    sessions = EnvSessions()
    sessions.reset(row, "m")
    for bad in ["R R", {"output": "R R"}, {"output": ["R R"]}]:
        with pytest.raises(TypeError, match="Responses API"):
            sessions.step(bad, "m")
    replies = sessions.step(
        {
            "output": [
                {"type": "function_call", "name": "jump", "arguments": "{}", "call_id": "u"},
                {"type": "function_call", "name": "play", "arguments": '{"steps": "R"}', "call_id": "x"},
                {"type": "function_call", "name": "play", "arguments": "[1]", "call_id": "y"},
            ]
        },
        "m",
    )[4]["tool_outputs"]
    assert [r["call_id"] for r in replies] == ["u", "x", "y"]
    assert "unknown tool 'jump'" in replies[0]["output"] and "unknown argument(s) ['steps']" in replies[1]["output"]
    assert "must be an object" in replies[2]["output"]
    assert sessions._sessions["m"].steps == 0  # none of them was an env step
    obs, reward, terminated, _, info = sessions.step(
        {"output": [{"type": "function_call", "name": "play", "arguments": {"moves": "L"}, "call_id": "d"}]}, "m"
    )  # arguments already decoded (some servers send an object) are accepted too
    assert "Board" in info["tool_outputs"][0]["output"] and not terminated
    with pytest.raises(ValueError, match="no env_id"):
        sessions.reset({"task_index": 0}, "n")
    with pytest.raises(ValueError, match="session"):
        sessions.reset(row, None)


TEMPLATE = Path(__file__).resolve().parents[2] / "integrations" / "nemo_gym" / "resources_servers" / "rlvr_gym"


def test_template_example_data_is_current(tmp_path):
    """NeMo Gym wants 5 example rows beside each server; they must be what the writer produces today."""
    shipped = (TEMPLATE / "data" / "example.jsonl").read_text()
    assert shipped == write_jsonl(SOKOBAN, 5, tmp_path / "example.jsonl").read_text(), (
        "regenerate: rlvr-gym trainer-data nemo-gym rlvr/Sokoban-v0 -n 5 -o "
        "integrations/nemo_gym/resources_servers/rlvr_gym/data/example.jsonl, then its example_metrics.json with "
        "NeMo Gym's `gym dataset collate ... +mode=example_validation` (docs/nemo-gym.md)"
    )


def test_template_requirements_install_nemo_gym_and_rlvr_gym():
    """NeMo Gym builds each server's venv from its requirements.txt alone: in a NeMo Gym checkout only the
    `-e nemo-gym[dev] @ ../../` line installs nemo-gym itself (from PyPI it swaps that line for `nemo-gym==VER`)."""
    lines = (TEMPLATE / "requirements.txt").read_text().split("\n")
    assert "-e nemo-gym[dev] @ ../../" in lines and "rlvr-gym" in lines
