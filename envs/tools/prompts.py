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
Answer: <value>"""

CHAIN_FORMAT = """Instead, you may submit the whole plan in one message as a chain; its last output is taken as your answer:
<tool_call return="one">{"0": {"<tool name>": {<arguments>}}, "1": {"<tool name>": {"<parameter>": "API_RESPONSE_0"}}}</tool_call>
where the string "API_RESPONSE_<k>" stands for the output of step <k>."""


def tools_block(schemas: list[dict[str, Any]]) -> str:
    lines = "\n".join(json.dumps(s, ensure_ascii=False) for s in schemas)
    return f"You can use these tools (JSON schemas in OpenAI function format):\n<tools>\n{lines}\n</tools>"


def tool_system_prompt(schemas: list[dict[str, Any]], *, answer: bool = True, chain: bool = True) -> str:
    parts = [tools_block(schemas), CALL_FORMAT]
    if answer:
        parts.append(ANSWER_FORMAT)
    if chain:
        parts.append(CHAIN_FORMAT)
    return "\n\n".join(parts)
