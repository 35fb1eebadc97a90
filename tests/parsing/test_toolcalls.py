"""Unit tests of the tools family's call parser (envs/tools/parsing.py), including adversarial inputs."""

from __future__ import annotations

import json
import time

import pytest

from rlvr_gym import ToolCall
from rlvr_gym.envs.tools.parsing import MAX_CHARS, call_arguments, parse_tool_calls
from rlvr_gym.tool_markup import format_tool_calls

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather of a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer"},
            },
            "required": ["city"],
        },
    },
}
ADD = {
    "name": "add",
    "parameters": {
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"],
    },
}
TOOLS = [WEATHER, ADD]


def hermes(name: str, args: dict) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': args})}\n</tool_call>"


# ---- formats -----------------------------------------------------------------------------------------------------


def test_hermes_single_call():
    out = parse_tool_calls(hermes("get_weather", {"city": "Paris"}), TOOLS)
    assert out.ok and out.format == "hermes"
    assert [c.name for c in out.calls] == ["get_weather"]
    assert out.arguments(0) == {"city": "Paris"}
    assert out.calls[0].id == "call_0"


def test_two_calls_in_two_blocks_keep_order_and_content():
    text = "Let me check.\n" + hermes("get_weather", {"city": "Oslo"}) + "\n" + hermes("add", {"a": 1, "b": 2})
    out = parse_tool_calls(text, TOOLS)
    assert out.ok
    assert [c.name for c in out.calls] == ["get_weather", "add"]
    assert [c.id for c in out.calls] == ["call_0", "call_1"]
    assert out.content == "Let me check."


def test_list_of_calls_in_one_block():
    text = '<tool_call>[{"name": "add", "arguments": {"a": 1, "b": 2}}, {"name": "add", "arguments": {"a": 3, "b": 4}}]</tool_call>'
    out = parse_tool_calls(text, TOOLS)
    assert out.ok and len(out.calls) == 2 and out.arguments(1) == {"a": 3, "b": 4}


def test_qwen_parameters_key_and_string_arguments():
    out = parse_tool_calls('<tool_call>{"name": "add", "parameters": {"a": 1, "b": 2}}</tool_call>', TOOLS)
    assert out.ok and out.arguments(0) == {"a": 1, "b": 2}
    out = parse_tool_calls('<tool_call>{"name": "add", "arguments": "{\\"a\\": 1, \\"b\\": 2}"}</tool_call>', TOOLS)
    assert out.ok and out.arguments(0) == {"a": 1, "b": 2}


def test_missing_closing_tag_is_accepted_when_json_is_complete():
    # servers often use </tool_call> as a stop sequence and strip it
    out = parse_tool_calls('<tool_call>{"name": "add", "arguments": {"a": 1, "b": 2}}', TOOLS)
    assert out.ok and len(out.calls) == 1


@pytest.mark.parametrize(
    "text",
    [
        json.dumps({"tool_calls": [{"id": "c", "function": {"name": "add", "arguments": "{}"}}]}),
        "Calling now:\n```json\n" + json.dumps({"name": "add", "arguments": {"a": 2, "b": 5}}) + "\n```\nDone.",
        '{"name": "add", "arguments": {"a": 1, "b": 1}}',
        'Sure! {"name": "add", "arguments": {"a": 1, "b": 1}} there.',
    ],
)
def test_json_outside_tool_call_tags_is_content_not_a_call(text):
    # one format only: an example or a quotation in prose can never run
    out = parse_tool_calls(text, TOOLS)
    assert out.ok and out.calls == [] and out.format == "none" and out.content == text.strip()


def test_plain_answer_has_no_calls_and_no_errors():
    out = parse_tool_calls("The answer is 42.", TOOLS)
    assert out.ok and out.calls == [] and out.content == "The answer is 42." and out.format == "none"


def test_tier_chain_with_placeholders_and_return_mode():
    chain = {"0": {"add": {"a": 1, "b": 2}}, "1": {"add": {"a": "API_RESPONSE_0", "b": 10}}}
    out = parse_tool_calls(f'<think>plan</think><tool_call return="all">{json.dumps(chain)}</tool_call>', TOOLS)
    assert out.ok, out.errors
    assert out.format == "tier" and out.return_mode == "all" and out.think == "plan"
    assert [c.id for c in out.calls] == ["0", "1"]
    assert out.arguments(1) == {"a": "API_RESPONSE_0", "b": 10}


def test_tier_return_one():
    out = parse_tool_calls('<tool_call return="one">{"0": {"add": {"a": 1, "b": 2}}}</tool_call>', TOOLS)
    assert out.return_mode == "one" and out.format == "tier"


# ---- think sections ------------------------------------------------------------------------------------------------


def test_calls_inside_think_are_not_calls():
    text = "<think>I could " + hermes("add", {"a": 1, "b": 2}) + "</think>" + hermes("get_weather", {"city": "Rome"})
    out = parse_tool_calls(text, TOOLS)
    assert [c.name for c in out.calls] == ["get_weather"]
    assert "<tool_call>" in out.think and out.ok


def test_only_call_inside_think_gives_no_call():
    out = parse_tool_calls("<think>" + hermes("add", {"a": 1, "b": 2}) + "</think>The answer is 3.", TOOLS)
    assert out.calls == [] and out.content == "The answer is 3."


def test_orphan_closing_think_from_chat_template():
    out = parse_tool_calls("reasoning here</think>final answer")
    assert out.think == "reasoning here" and out.content == "final answer"


def test_unclosed_think_swallows_the_rest():
    out = parse_tool_calls("<think>still thinking " + hermes("add", {"a": 1, "b": 2}))
    assert out.calls == [] and "still thinking" in out.think and out.content == ""


def test_multiple_think_sections_joined():
    out = parse_tool_calls("<think>a</think>x<think>b</think>y")
    assert out.think == "a\nb" and out.content == "xy"


# ---- adversarial ---------------------------------------------------------------------------------------------------


def test_nested_braces_and_tags_inside_strings():
    args = {"city": 'a}b{c"d </tool_call> <tool_call> ```'}
    out = parse_tool_calls(hermes("get_weather", args) + "\n" + hermes("add", {"a": 1, "b": 2}), TOOLS)
    assert out.ok, out.errors
    assert out.arguments(0) == args and [c.name for c in out.calls] == ["get_weather", "add"]


def test_truncated_json_is_a_truncated_error():
    out = parse_tool_calls('<tool_call>{"name": "add", "arguments": {"a": 1, "b"', TOOLS)
    assert out.calls == [] and [e.kind for e in out.errors] == ["truncated"]
    assert out.errors[0].span == (0, len('<tool_call>{"name": "add", "arguments": {"a": 1, "b"'))
    assert not out.syntax_ok


def test_truncated_inside_string():
    out = parse_tool_calls('<tool_call>{"name": "add", "arguments": {"a": "abc')
    assert [e.kind for e in out.errors] == ["truncated"]


def test_broken_json_with_closing_tag_is_invalid_json_and_next_block_still_parses():
    text = '<tool_call>{"name": "add", "arguments": {a: 1}}</tool_call>' + hermes("add", {"a": 1, "b": 2})
    out = parse_tool_calls(text, TOOLS)
    assert [e.kind for e in out.errors] == ["invalid_json"]
    assert len(out.calls) == 1 and out.calls[0].name == "add"
    assert out.errors[0].span == (0, text.index("</tool_call>") + len("</tool_call>"))


def test_unclosed_broken_block_does_not_swallow_the_next_call():
    text = '<tool_call>{"name": "add", "arguments": {"a": 1,\n' + hermes("get_weather", {"city": "Lima"})
    out = parse_tool_calls(text, TOOLS)
    assert [c.name for c in out.calls] == ["get_weather"]
    assert [e.kind for e in out.errors] == ["invalid_json"] and out.errors[0].span == (0, text.index("<tool_call>", 1))


def test_empty_tool_call_block():
    out = parse_tool_calls("<tool_call></tool_call>")
    assert [e.kind for e in out.errors] == ["invalid_json"] and out.calls == []


def test_json_without_name_is_invalid_call():
    out = parse_tool_calls('<tool_call>{"tool": "add", "args": {}}</tool_call>')
    assert [e.kind for e in out.errors] == ["invalid_call"]


def test_arguments_not_an_object_is_invalid_call():
    out = parse_tool_calls('<tool_call>{"name": "add", "arguments": [1, 2]}</tool_call>', TOOLS)
    assert [e.kind for e in out.errors] == ["invalid_call"] and out.calls == []
    out = parse_tool_calls('<tool_call>{"name": "add", "arguments": "not json"}</tool_call>', TOOLS)
    assert [e.kind for e in out.errors] == ["invalid_call"]


def test_non_string_name_is_invalid_call():
    out = parse_tool_calls('<tool_call>{"name": 12, "arguments": {}}</tool_call>')
    assert [e.kind for e in out.errors] == ["invalid_call"]


def test_unknown_tool_name_is_reported_with_call_index():
    out = parse_tool_calls(hermes("add", {"a": 1, "b": 2}) + hermes("teleport", {"to": "Mars"}), TOOLS)
    assert len(out.calls) == 2
    assert [(e.kind, e.call_index) for e in out.errors] == [("unknown_tool", 1)]
    assert out.syntax_ok and not out.ok


def test_deeply_nested_json_does_not_raise():
    text = "<tool_call>" + "[" * 100_000 + "]" * 100_000 + "</tool_call>"
    out = parse_tool_calls(text)
    assert out.calls == [] and out.errors


def test_huge_integer_does_not_raise():
    out = parse_tool_calls('<tool_call>{"name": "add", "arguments": {"a": ' + "9" * 10_000 + ', "b": 1}}</tool_call>')
    assert out.calls == [] and out.errors


def test_huge_input_is_linear_and_capped():
    big = "x" * 1_000_000
    start = time.perf_counter()
    out = parse_tool_calls(big + hermes("add", {"a": 1, "b": 2}), TOOLS)
    assert out.ok and len(out.calls) == 1
    many_opens = '<tool_call>{"name": "add", ' * 30_000  # ~1 MB of unterminated blocks
    out = parse_tool_calls(many_opens, TOOLS)
    assert out.errors and out.calls == []
    out = parse_tool_calls("```json\n" * 120_000)
    out = parse_tool_calls("<think>" * 150_000)
    out = parse_tool_calls('<think>x</think><tool_call>{"name": "add", "arguments": {}}' * 20_000)
    assert len(out.calls) <= 64
    assert time.perf_counter() - start < 5.0


ADVERSARIAL = {
    "newlines": "\n" * 1_000_000,
    "backticks": "`" * 1_000_000,
    "fences": "```json\n" * 125_000,
    "brackets": "[" * 500_000 + "]" * 500_000,
    "braces": "{" * 1_000_000,
    "repeated_tags": "<tool_call>" * 90_000,
    "unterminated_calls": '<tool_call>{"name": "add", "arguments": {"a": "' * 20_000,
    "calls_then_junk": hermes("add", {"a": 1, "b": 2}) * 64 + "}" * 1_000_000,
    "think_tags": "<think></think>" * 66_000,
    "placeholders": '<tool_call return="one">{"0": {"add": {"a": "API_RESPONSE_0' + "_" * 1_000_000,
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_one_megabyte_adversarial_action_parses_under_100_ms(name):
    text = ADVERSARIAL[name]
    parse_tool_calls(text[:1000])  # warm-up (regex compilation, imports)
    best = min(_timed(lambda: parse_tool_calls(text, TOOLS)) for _ in range(3))  # best of 3: a busy machine
    assert best < 0.1, f"{name}: {best * 1000:.0f} ms"


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def test_input_beyond_cap_is_reported():
    out = parse_tool_calls(hermes("add", {"a": 1, "b": 2}) + "y" * (MAX_CHARS + 10), TOOLS)
    assert [e.kind for e in out.errors] == ["input_too_large"] and len(out.calls) == 1


def test_huge_string_argument():
    out = parse_tool_calls(hermes("get_weather", {"city": "z" * 500_000}), TOOLS)
    assert out.ok and len(out.arguments(0)["city"]) == 500_000


def test_too_many_calls_are_capped():
    text = "".join(hermes("add", {"a": i, "b": 1}) for i in range(10))
    out = parse_tool_calls(text, TOOLS, max_calls=4)
    assert len(out.calls) == 4 and [e.kind for e in out.errors] == ["too_many_calls"]


def test_non_string_input_does_not_raise():
    out = parse_tool_calls(None)  # type: ignore[arg-type]
    assert out.calls == []


@pytest.mark.parametrize(
    "text",
    [
        "<tool_call>",
        "<tool_call>{",
        "```json\n{",
        '{"name":',
        "</think>",
        "<think>",
        "<tool_call>null</tool_call>",
        "<tool_call>[]</tool_call>",
        "\x00\ud800",
        '<tool_call return="maybe">{"0": {"a": 5}}</tool_call>',
        '{"tool_calls": 3}',
        '<tool_call>{"0": {"": {}}}</tool_call>',
        "<tool_call>[1, 2]</tool_call>",
    ],
)
def test_garbage_never_raises(text):
    out = parse_tool_calls(text, TOOLS)
    assert isinstance(out.errors, list)


# ---- round trip, schema validation ------------------------------------------------------------------------------


def test_format_round_trips_hermes():
    calls = [
        ToolCall(id="call_0", name="add", arguments='{"a": 1, "b": 2}'),
        ToolCall(id="call_1", name="get_weather", arguments='{"city": "Zürich </tool_call> {"}'),
    ]
    out = parse_tool_calls(format_tool_calls(calls), TOOLS)
    assert out.ok and [(c.name, call_arguments(c)) for c in out.calls] == [(c.name, call_arguments(c)) for c in calls]


def test_format_keeps_server_ids():
    calls = [
        ToolCall(id="call_abc123", name="add", arguments='{"a": 1, "b": 2}'),
        ToolCall(id="call_1", name="add", arguments='{"a": 3, "b": 4}'),
    ]
    text = format_tool_calls(calls)
    assert '"id": "call_abc123"' in text and text.count('"id"') == 1
    assert [c.model_dump() for c in parse_tool_calls(text, TOOLS).calls] == [c.model_dump() for c in calls]


def test_format_round_trips_tier():
    calls = [
        ToolCall(id="0", name="add", arguments='{"a": 1, "b": 2}'),
        ToolCall(id="1", name="add", arguments='{"a": "API_RESPONSE_0", "b": 2}'),
    ]
    out = parse_tool_calls(format_tool_calls(calls, style="tier", return_mode="all"), TOOLS)
    assert out.ok and out.format == "tier" and out.return_mode == "all"
    assert [c.model_dump() for c in out.calls] == [c.model_dump() for c in calls]


def test_text_after_the_think_section_cap_is_thought():
    from rlvr_gym.envs.tools.parsing import MAX_THINK_SECTIONS

    text = "<think>a</think>" * MAX_THINK_SECTIONS + hermes("add", {"a": 1, "b": 2})
    out = parse_tool_calls(text, TOOLS)
    assert out.calls == [] and "<tool_call>" in out.think
    assert len(parse_tool_calls("<think>a</think>" * 3 + hermes("add", {"a": 1, "b": 2})).calls) == 1
