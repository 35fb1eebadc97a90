"""The shared episode contract under every trainer adapter: tools render to the env's own action text, the
verdict is the env's, and bad tool input is a typed error, never a crash or a score."""

from __future__ import annotations

import json

import pytest

import rlvr_gym
from rlvr_gym.integrations.episode import (
    DEFAULT_TEXT_TOOL,
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


REPLY = ("respond", "Send your reply to the environment; it is judged exactly as written.", "text", "Your reply text.")
# env id -> [(tool name, description, [(param, type, description, required)], action for the argument "R D")]:
# what each family's env offers a trainer, written out so that moving a declaration can never change it
TOOL_SNAPSHOT = {
    "rlvr/Math-v0": [
        (
            "answer",
            "Submit your final answer; it is checked exactly as written, so use the format the task asks for "
            "(for example \\boxed{...}).",
            [("text", str, "Your final answer text.", True)],
            "R D",
        )
    ],
    "rlvr/Sokoban-v0": [
        (
            "play",
            "Play moves on the board and see the new board; an illegal move rejects the whole message.",
            [("moves", str, "The moves, for example 'R R D' or 'right, down'.", True)],
            "R D",
        )
    ],
    "rlvr/SokobanFrames-v0": [(REPLY[0], REPLY[1], [(REPLY[2], str, REPLY[3], True)], "R D")],
    "rlvr/ALFWorld-v0": [
        (
            "act",
            "Take one action in the household, for example 'go to desk 1'.",
            [("action", str, "One action command.", True)],
            "R D",
        )
    ],
    "rlvr/WebShop-v0": [
        (
            "act",
            "Take one shop action: search[keywords] or click[text of a clickable].",
            [("action", str, "One action, for example 'search[usb cable]'.", True)],
            "R D",
        )
    ],
    "rlvr/GeoX-v0": [
        (
            "answer",
            "Send your reply in the format the task asks for; it is checked exactly as written.",
            [("text", str, "Your reply text.", True)],
            "R D",
        )
    ],
    "rlvr/CodeGen-v0": [
        (
            "run",
            "Run Python code in the sandbox and see its stdout and stderr (counts as one turn).",
            [("code", str, "The Python code to run.", True)],
            "<run>\nR D\n</run>",
        ),
        (
            "submit",
            "Submit the full solution; it is final and checked against hidden tests.",
            [("code", str, "The complete Python solution.", True)],
            "<submit>\nR D\n</submit>",
        ),
    ],
    "rlvr/RobotProgram-v0": [(REPLY[0], REPLY[1], [(REPLY[2], str, REPLY[3], True)], "R D")],
    "rlvr/BFCL-v0": [(REPLY[0], REPLY[1], [(REPLY[2], str, REPLY[3], True)], "R D")],
}
TOOL_DEPTH_NAMES = [
    "get_capital", "get_country_of_city", "get_currency", "get_population", "get_continent", "get_language",
    "distance_km", "get_utc_offset", "get_temperature", "get_weather_condition", "get_airport_code",
    "get_airport_city", "find_cheapest_flight", "get_flight_price", "get_flight_duration", "get_flight_destination",
    "convert_currency", "convert_units", "multiply", "add_numbers", "round_number", "get_event_date",
    "schedule_event", "days_until", "add_days", "get_weekday", "find_file", "read_file", "write_file", "count_words",
    "answer",
]  # fmt: skip


def tool_view(tool: ActionTool) -> tuple[str, str, list[tuple[str, type, str, bool]], str]:
    params = [(p.name, p.type, p.description, p.required) for p in tool.params]
    return tool.name, tool.description, params, tool.action({p.name: "R D" for p in tool.params})


@pytest.mark.parametrize("env_id", sorted(TOOL_SNAPSHOT))
def test_tools_per_family(env_id):
    assert [tool_view(t) for t in action_tools(rlvr_gym.make(env_id))] == TOOL_SNAPSHOT[env_id]


def test_tools_of_a_toolset_env():
    tools = {t.name: t for t in action_tools(rlvr_gym.make("rlvr/ToolDepth-v0"))}
    assert list(tools) == TOOL_DEPTH_NAMES
    assert tool_view(tools["distance_km"]) == (
        "distance_km",
        "Return the great-circle distance between two cities in kilometres, rounded to 1 decimal.",
        [("city_a", str, "City name, e.g. 'Paris'", True), ("city_b", str, "City name, e.g. 'Paris'", True)],
        '<tool_call>\n{"name": "distance_km", "arguments": {"city_a": "R D", "city_b": "R D"}}\n</tool_call>',
    )
    assert tool_view(tools["answer"]) == (
        "answer",
        "Give the final answer, as a tool reported it; this ends the episode.",
        [("value", str, "The final value, exactly as the tool output gave it.", True)],
        "Answer: R D",
    )
    assert tools["answer"].action({"value": 3.5}) == "Answer: 3.5"  # non-text values are written as JSON


def test_tools_come_from_the_env_never_from_its_family_name():
    math_env = type(rlvr_gym.make("rlvr/Math-v0"))
    bare = type("Bare", (math_env,), {"trainer_tools": ()})  # family "math", no tools of its own
    assert bare.family == "math" and action_tools(object.__new__(bare)) == [DEFAULT_TEXT_TOOL]
    own = type("Own", (math_env,), {"trainer_tools": (DEFAULT_TEXT_TOOL, *math_env.trainer_tools)})
    assert [t.name for t in action_tools(object.__new__(own))] == ["respond", "answer"]


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
