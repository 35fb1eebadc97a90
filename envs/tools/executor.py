"""Execute parsed tool calls in order, resolving TIER placeholders (`"API_RESPONSE_<id>"`) to earlier outputs.

A call the parser already flagged (unknown tool, schema violation) is answered with that structured error and not
run; everything else runs through the tool's strict pydantic validation. Nothing here raises.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from rlvr_gym.toolcalls import PARAM_KINDS, PLACEHOLDER, TYPE_KINDS, ParsedOutput, call_arguments

from .toolset import ToolOutcome, Toolset


class _Unresolved(Exception):
    pass


def resolve(value: Any, outputs: dict[str, Any]) -> Any:
    """Replace placeholder strings (whole values, also inside lists/dicts) by the outputs they name."""
    if isinstance(value, str):
        match = PLACEHOLDER.fullmatch(value)
        if match is None:
            return value
        if match.group(1) not in outputs:
            raise _Unresolved(value)
        return outputs[match.group(1)]
    if isinstance(value, list):
        return [resolve(v, outputs) for v in value]
    if isinstance(value, dict):
        return {k: resolve(v, outputs) for k, v in value.items()}
    return value


def execute_parsed(
    parsed: ParsedOutput, toolset: Toolset, world: Any, allowed: Collection[str] | None = None
) -> list[ToolOutcome]:
    """One outcome per call of `parsed`, in order; successful outputs are referable by the call's id."""
    outputs: dict[str, Any] = {}
    outcomes: list[ToolOutcome] = []
    for index, call in enumerate(parsed.calls):
        outcome = _execute_one(index, parsed, toolset, world, allowed, outputs)
        if outcome.ok:
            outputs[call.id] = outcome.result
        outcomes.append(outcome)
    return outcomes


def _execute_one(
    index: int, parsed: ParsedOutput, toolset: Toolset, world: Any, allowed: Collection[str] | None,
    outputs: dict[str, Any],
) -> ToolOutcome:
    call = parsed.calls[index]
    if call.name not in toolset or (allowed is not None and call.name not in allowed):
        return ToolOutcome(ok=False, error_kind="unknown_tool", error=f"unknown tool {call.name!r}")
    flagged = [e for e in parsed.errors_for(index) if e.kind in PARAM_KINDS | TYPE_KINDS]
    if flagged:
        return ToolOutcome(ok=False, error_kind="schema", field=flagged[0].field,
                           error="; ".join(e.message for e in flagged))
    try:
        arguments = resolve(call_arguments(call), outputs)
    except _Unresolved as exc:
        return ToolOutcome(ok=False, error_kind="unresolved_reference",
                           error=f"{exc} refers to a call that has not produced an output (yet)")
    return toolset.execute(world, call.name, arguments)
