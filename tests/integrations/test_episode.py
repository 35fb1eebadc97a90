"""The shared episode contract under every trainer adapter: tools render to the env's own action text, the
verdict is the env's, and bad tool input is a typed error, never a crash or a score."""

from __future__ import annotations

import json

import pytest

import rlvr_gym
from rlvr_gym.integrations.episode import (
    ActionTool,
    CompletionScorer,
    EnvSession,
    ToolArgumentError,
    ToolParam,
    action_tools,
    completion_text,
    task_rows,
    verbatim,
)


def test_task_rows_match_env_reset_and_hide_answers():
    rows = task_rows("rlvr/Math-v0", 3, seed=5)
    env = rlvr_gym.make("rlvr/Math-v0")
    for row in rows:
        messages, info = env.reset(seed=row.seed)
        assert (row.task_index, row.task_id) == (info["task_index"], info["task_id"])
        assert row.messages == [{"role": m["role"], "content": m["content"]} for m in messages]
        assert str(env.task.ground_truth) not in json.dumps(row.as_dict()).replace(row.messages[0]["content"], "")


def test_tools_per_family():
    names = {
        eid: [t.name for t in action_tools(rlvr_gym.make(eid))]
        for eid in ("rlvr/Math-v0", "rlvr/CodeGen-v0", "rlvr/Sokoban-v0", "rlvr/SokobanFrames-v0")
    }
    assert names == {
        "rlvr/Math-v0": ["answer"],
        "rlvr/CodeGen-v0": ["run", "submit"],
        "rlvr/Sokoban-v0": ["play"],
        "rlvr/SokobanFrames-v0": ["respond"],
    }
    tools = action_tools(rlvr_gym.make("rlvr/ToolDepth-v0"))
    assert "get_capital" in [t.name for t in tools] and tools[-1].name == "answer"


def test_oracle_through_a_tool_scores_full_marks_and_verdict_is_final():
    session = EnvSession("rlvr/Sokoban-v0")
    session.reset(task_index=0)
    assert session.reward == 0.0 and session.final_verdict().passed is False  # truncation verdict, not a pass
    reply = session.call_tool("play", {"moves": session.env.task.reference_actions[0]})
    assert session.done and "episode is over" in reply
    assert session.reward == 1.0 and session.final_verdict().passed
    session.call_tool("play", {"moves": "U"})  # after the end nothing changes the verdict
    assert session.reward == 1.0
    session.reset(task_index=0)  # a new episode starts clean
    assert session.reward == 0.0 and not session.done


def test_tool_call_renders_to_the_env_call_format():
    session = EnvSession("rlvr/ToolDepth-v0")
    session.reset(task_index=0)
    reply = session.call_tool("get_airport_code", {"city": "Buenos Aires"})
    assert "EZE" in reply and not session.done
    session.call_tool("answer", {"value": "nonsense"})
    assert session.done and session.reward < 1.0


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"text": "x", "extra": 1}, "unknown argument"),
        ({}, "missing argument"),
        ({"text": None}, "missing argument"),
        ("not a dict", "must be an object"),
        ({"text": "x" * 1_000_001}, "longer than"),
    ],
)
def test_bad_tool_arguments_are_typed_errors(arguments, message):
    session = EnvSession("rlvr/Math-v0")
    session.reset(task_index=0)
    with pytest.raises(ToolArgumentError, match=message):
        session.call_tool("answer", arguments)
    with pytest.raises(ToolArgumentError, match="unknown tool"):
        session.call_tool("set_reward", {"value": 1})
    assert not session.done


@pytest.mark.parametrize("junk", ["\x00" * 10, "\ud800 lone surrogate", "`" * 100_000, "\n" * 100_000, "[" * 50_000])
def test_junk_actions_never_crash(junk):
    session = EnvSession("rlvr/Math-v0")
    session.reset(task_index=1)
    session.call_tool("answer", {"text": junk})
    assert session.done and session.reward == 0.0


def test_reset_rejects_a_row_from_other_env_options():
    session = EnvSession("rlvr/Math-v0")
    with pytest.raises(ValueError, match="other env options"):
        session.reset(task_index=0, task_id="math/train/1")
    for bad in (-1, True, "3", 1.5):
        with pytest.raises(ValueError, match="non-negative integer"):
            session.reset(task_index=bad)


def test_action_tool_names_are_checked():
    with pytest.raises(ValueError, match="reserved"):
        ActionTool("get_reward", "x", (), verbatim("text"))
    with pytest.raises(ValueError, match="identifier"):
        ActionTool("ok", "x", (ToolParam("not-valid", str, "d"),), verbatim("not-valid"))


def test_completion_scorer_uses_the_env_verifier():
    scorer = CompletionScorer("rlvr/Math-v0")
    task = rlvr_gym.make("rlvr/Math-v0").get_task(0)
    assert scorer.verdict(0, task.reference_actions[0], task.id).passed
    chat = [{"role": "assistant", "content": task.reference_actions[0]}]
    assert scorer.verdict(0, chat).passed
    assert not scorer.verdict(0, "\\boxed{0}").passed
    assert completion_text([{"role": "tool", "content": task.reference_actions[0]}]) == ""  # only model turns count
    with pytest.raises(ValueError):
        scorer.verdict(0, "x", "math/train/9")
