"""Unit tests of the tool-call parser, including adversarial inputs."""

from __future__ import annotations

import json
import time

import pytest

from rlvr_gym import ToolCall
from rlvr_gym.agents import parsing as agent_parsing
from rlvr_gym.toolcalls import (
    MAX_CHARS,
    call_arguments,
    check_calls,
    format_tool_calls,
    normalize_tools,
    parse_tool_calls,
    validate_arguments,
)

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
ADD = {"name": "add", "parameters": {"type": "object", "properties": {"a": {"type": "number"},
                                                                       "b": {"type": "number"}},
                                     "required": ["a", "b"]}}
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


def test_openai_server_tool_calls_json():
    payload = {"tool_calls": [{"id": "call_abc", "type": "function",
                               "function": {"name": "add", "arguments": json.dumps({"a": 1, "b": 2})}}]}
    out = parse_tool_calls(json.dumps(payload), TOOLS)
    assert out.ok and out.format == "openai"
    assert out.calls[0].id == "call_abc" and out.arguments(0) == {"a": 1, "b": 2}


def test_fenced_json_block():
    text = "Calling now:\n```json\n" + json.dumps({"name": "add", "arguments": {"a": 2, "b": 5}}) + "\n```\nDone."
    out = parse_tool_calls(text, TOOLS)
    assert out.ok and out.format == "fenced" and out.calls[0].name == "add"
    assert out.content == "Calling now:\n\nDone."


def test_fenced_json_that_is_not_a_call_stays_content():
    text = 'The result is:\n```json\n{"temperature": 21}\n```'
    out = parse_tool_calls(text, TOOLS)
    assert out.calls == [] and out.ok and "temperature" in out.content


def test_fenced_python_code_is_not_a_call():
    out = parse_tool_calls('```python\nprint({"name": "x"})\n```')
    assert out.calls == [] and out.ok


def test_bare_hermes_json():
    out = parse_tool_calls('{"name": "add", "arguments": {"a": 1, "b": 1}}', TOOLS)
    assert out.ok and out.format == "json" and out.calls[0].name == "add"


def test_bare_call_after_prose():
    out = parse_tool_calls('Sure! {"name": "add", "arguments": {"a": 1, "b": 1}} there.', TOOLS)
    assert out.ok and out.calls[0].name == "add" and out.content == "Sure!  there."


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
    args = {"city": "a}b{c\"d </tool_call> <tool_call> ```"}
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
    assert [(e.kind, e.call_index, e.tool) for e in out.errors] == [("unknown_tool", 1, "teleport")]
    assert out.syntax_ok and not out.ok


def test_wrong_types_missing_and_unknown_parameters():
    out = parse_tool_calls(hermes("get_weather", {"days": "3", "unit": "kelvin", "color": "red"}), TOOLS)
    kinds = sorted((e.kind, e.field) for e in out.errors)
    assert kinds == [("invalid_value", "unit"), ("missing_argument", "city"), ("unexpected_argument", "color"),
                     ("wrong_type", "days")]
    assert out.count({"missing_argument", "unexpected_argument"}) == 2


def test_deeply_nested_json_does_not_raise():
    text = "<tool_call>" + "[" * 100_000 + "]" * 100_000 + "</tool_call>"
    out = parse_tool_calls(text)
    assert out.calls == [] and out.errors


def test_huge_integer_does_not_raise():
    out = parse_tool_calls('<tool_call>{"name": "add", "arguments": {"a": ' + "9" * 10_000 + ", \"b\": 1}}</tool_call>")
    assert out.calls == [] and out.errors


def test_huge_input_is_linear_and_capped():
    big = "x" * 1_000_000
    start = time.perf_counter()
    out = parse_tool_calls(big + hermes("add", {"a": 1, "b": 2}), TOOLS)
    assert out.ok and len(out.calls) == 1
    many_opens = "<tool_call>{\"name\": \"add\", " * 30_000  # ~1 MB of unterminated blocks
    out = parse_tool_calls(many_opens, TOOLS)
    assert out.errors and out.calls == []
    out = parse_tool_calls("```json\n" * 120_000)
    out = parse_tool_calls("<think>" * 150_000)
    out = parse_tool_calls('<think>x</think>{"name": "add", "arguments": {}}' * 30_000)
    assert len(out.calls) <= 64
    out = parse_tool_calls('<think>x</think>{"name": "add", "arguments": {' * 30_000)
    assert out.errors
    assert time.perf_counter() - start < 5.0


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


@pytest.mark.parametrize("text", ["<tool_call>", "<tool_call>{", "```json\n{", "{\"name\":", "</think>", "<think>",
                                  "<tool_call>null</tool_call>", "<tool_call>[]</tool_call>", "\x00\ud800",
                                  '<tool_call return="maybe">{"0": {"a": 5}}</tool_call>', "{\"tool_calls\": 3}"])
def test_garbage_never_raises(text):
    out = parse_tool_calls(text, TOOLS)
    assert isinstance(out.errors, list)


# ---- round trip, schema validation ------------------------------------------------------------------------------


def test_format_round_trips_hermes():
    calls = [ToolCall(id="call_0", name="add", arguments='{"a": 1, "b": 2}'),
             ToolCall(id="call_1", name="get_weather", arguments='{"city": "Zürich </tool_call> {"}')]
    out = parse_tool_calls(format_tool_calls(calls), TOOLS)
    assert out.ok and [(c.name, call_arguments(c)) for c in out.calls] == [(c.name, call_arguments(c)) for c in calls]


def test_format_keeps_server_ids():
    calls = [ToolCall(id="call_abc123", name="add", arguments='{"a": 1, "b": 2}'),
             ToolCall(id="call_1", name="add", arguments='{"a": 3, "b": 4}')]
    text = format_tool_calls(calls)
    assert '"id": "call_abc123"' in text and text.count('"id"') == 1
    assert [c.model_dump() for c in parse_tool_calls(text, TOOLS).calls] == [c.model_dump() for c in calls]


def test_format_round_trips_tier():
    calls = [ToolCall(id="0", name="add", arguments='{"a": 1, "b": 2}'),
             ToolCall(id="1", name="add", arguments='{"a": "API_RESPONSE_0", "b": 2}')]
    out = parse_tool_calls(format_tool_calls(calls, style="tier", return_mode="all"), TOOLS)
    assert out.ok and out.format == "tier" and out.return_mode == "all"
    assert [c.model_dump() for c in out.calls] == [c.model_dump() for c in calls]


def test_validate_arguments_nested_and_placeholders():
    schema = {"type": "object", "properties": {
        "items": {"type": "array", "items": {"type": "object", "properties": {"sku": {"type": "string"},
                                                                              "qty": {"type": "integer"}},
                                             "required": ["sku"]}},
        "note": {"type": ["string", "null"]}}, "required": ["items"]}
    bad = validate_arguments({"items": [{"sku": "a", "qty": 1}, {"qty": 1.5}, {"sku": 3}], "note": None}, schema)
    assert sorted((m.kind, m.path) for m in bad) == [("missing", "items[1].sku"), ("type", "items[1].qty"),
                                                     ("type", "items[2].sku")]
    assert [m.category for m in bad].count("type") == 2
    assert validate_arguments({"items": "API_RESPONSE_3"}, schema) == []
    assert validate_arguments({"items": [], "note": "ok"}, {"type": "function", "function": {"parameters": schema}}) == []


def test_validate_arguments_bfcl_type_aliases_and_int_for_float():
    schema = {"type": "dict", "properties": {"x": {"type": "float"}, "t": {"type": "tuple"}, "d": {"type": "dict"},
                                             "z": {"type": "any"}}, "required": ["x"]}
    assert validate_arguments({"x": 3, "t": [1, 2], "d": {}, "z": None}, schema) == []
    assert [m.kind for m in validate_arguments({"x": "3"}, schema)] == ["type"]


def test_validate_arguments_bool_is_not_integer_and_anyof():
    schema = {"type": "object", "properties": {"n": {"type": "integer"},
                                               "v": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}}
    assert [m.path for m in validate_arguments({"n": True, "v": 1}, schema)] == ["n"]
    assert [m.path for m in validate_arguments({"n": 2.0, "v": [1]}, schema)] == ["v"]


def test_validate_arguments_invalid_json_string():
    assert [m.kind for m in validate_arguments("{oops", ADD)] == ["type"]


def test_check_calls_for_structured_server_calls():
    calls = [ToolCall(name="add", arguments='{"a": 1}'), ToolCall(name="nope", arguments="{}")]
    errors = check_calls(calls, TOOLS)
    assert [(e.kind, e.call_index) for e in errors] == [("missing_argument", 0), ("unknown_tool", 1)]


def test_normalize_tools_shapes():
    specs = normalize_tools({"add": ADD["parameters"], "w": WEATHER})
    assert set(specs) == {"add", "get_weather"} and specs["add"]["parameters"]["required"] == ["a", "b"]
    assert normalize_tools([WEATHER, ADD, "junk", {"function": {"name": 3}}]).keys() == {"get_weather", "add"}


def test_agents_reexport_is_the_same_parser():
    assert agent_parsing.parse_tool_calls is parse_tool_calls
    assert agent_parsing.format_tool_calls is format_tool_calls
