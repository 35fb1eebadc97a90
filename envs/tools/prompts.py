"""Prompt text for tool tasks: the tool schemas and the exact output format, shown to every agent."""

from __future__ import annotations

import json
from typing import Any

CALL_FORMAT = """To call a tool, write a block exactly like this (one block per call; several blocks in one message run in order):
<tool_call>
{"name": "<tool name>", "arguments": {"<parameter>": <value>}}
</tool_call>
Each result comes back to you as a tool message."""

ANSWER_FORMAT = """When you know the final result, reply without any tool call, on one line:
Answer: <value>
Give exactly one answer, as the tool reported it (integers exactly). Only values you took from tool results count:
a step whose input you typed before seeing it, or an answer no tool call of the question produced, earns nothing."""

CHAIN_FORMAT = """Instead, you may submit the whole plan in one message as a chain; its last output is taken as your answer:
<tool_call return="one">{"0": {"<tool name>": {<arguments>}}, "1": {"<tool name>": {"<parameter>": "API_RESPONSE_0"}}}</tool_call>
where the string "API_RESPONSE_<k>" stands for the output of step <k>. A chain must be the only call block of its message."""


def tools_block(schemas: list[dict[str, Any]]) -> str:
    lines = "\n".join(json.dumps(s, ensure_ascii=False) for s in schemas)
    return f"You can use these tools (JSON schemas in OpenAI function format):\n<tools>\n{lines}\n</tools>"


def tool_system_prompt(schemas: list[dict[str, Any]]) -> str:
    """The depth tasks' system prompt: the tools, how to call them, how to answer, how to submit a chain."""
    return "\n\n".join([tools_block(schemas), CALL_FORMAT, ANSWER_FORMAT, CHAIN_FORMAT])
