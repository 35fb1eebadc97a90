"""NeMo Gym glue (no nemo-gym import): the JSONL rows and per-session env steps behind the resources server."""

from __future__ import annotations

import json

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
