"""Tool calls written as text: the `<tool_call>` markup (Hermes style, and TIER's chained block).

Core, because three places write it and none owns it: agents that turn an OpenAI server's structured `tool_calls`
into the text an env reads (`agents/chat.py`), the trainer adapters that render a tool call as an action
(`integrations/episode.py`), and the tools family, which parses it back (`envs/tools/parsing.py`, whose parser
round-trips everything written here).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Literal

from rlvr_gym.types import ToolCall


def hermes_block(name: str, arguments: Any, call_id: str | None = None) -> str:
    """One `<tool_call>` block; `call_id` is written only when given."""
    body: dict[str, Any] = {"name": name, "arguments": arguments}
    if call_id:
        body["id"] = call_id
    return "<tool_call>\n" + json.dumps(body, ensure_ascii=False) + "\n</tool_call>"


def arguments_value(call: ToolCall) -> Any:
    """A call's arguments as JSON data (the raw string when it is not JSON, so nothing is lost)."""
    try:
        return json.loads(call.arguments) if call.arguments else {}
    except (ValueError, RecursionError):
        return call.arguments


def format_tool_calls(
    calls: Iterable[ToolCall], *, style: Literal["hermes", "tier"] = "hermes", return_mode: str = "one"
) -> str:
    """Render calls as `<tool_call>` blocks (one per call) or as one TIER chained block; both round-trip.

    A Hermes block carries `"id"` when the call's id is not the parser's default `call_<position>`, so
    server-assigned ids survive; TIER keys are the call ids when set, else their positions.
    """
    calls = list(calls)
    if style == "tier":
        chain = {(c.id or str(i)): {c.name: arguments_value(c)} for i, c in enumerate(calls)}
        return f'<tool_call return="{return_mode}">{json.dumps(chain, ensure_ascii=False)}</tool_call>'
    return "\n".join(
        hermes_block(c.name, arguments_value(c), c.id if c.id and c.id != f"call_{i}" else None)
        for i, c in enumerate(calls)
    )
