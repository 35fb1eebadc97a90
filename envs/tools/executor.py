"""Run an episode's tool calls and keep the executor's own record of where every argument value came from.

Provenance is what the verifier trusts, never the model's account of it. An argument value derives from an
earlier call when
- it is a TIER placeholder `"API_RESPONSE_<id>"` naming that call in the same chain (resolved here), or
- it equals the output of a call the agent was shown in an earlier turn (it read the tool message and copied it).
A value typed in the same message as the call that produces it is a guess, not a derivation. A call whose output
equals one of its own inputs (multiply by one, add zero, a no-op conversion) is a pass-through: values derived from
it derive from that input's sources; it never produces a required value (see `provenance.py`).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from .parsing import PLACEHOLDER, ParsedOutput, call_arguments
from .toolset import ToolOutcome, Toolset


def value_key(value: Any) -> tuple[str, Any] | None:
    """Identity of a scalar value for provenance: numbers by exact value, strings as the tools read them."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return ("num", float(value))
    if isinstance(value, str):
        return ("str", value.strip().casefold())
    return None


@dataclass
class Record:
    """One executed (or rejected) call, as the executor saw it."""

    position: int  # order in the episode
    action: int  # index of the action (turn) that made the call
    call_id: str
    name: str
    outcome: ToolOutcome
    sources: dict[str, frozenset[int]] = field(default_factory=dict)  # argument -> positions it derives from
    passthrough: frozenset[int] = frozenset()  # set when the output equals one of the inputs

    @property
    def ok(self) -> bool:
        return self.outcome.ok


class Executor:
    """Executes parsed calls in a per-episode world and accumulates `Record`s."""

    def __init__(self, toolset: Toolset, allowed: Collection[str]) -> None:
        self.toolset = toolset
        self.allowed = frozenset(allowed)
        self.world = toolset.new_world()
        self.records: list[Record] = []
        self._shown: dict[tuple[str, Any], set[int]] = {}  # output key -> positions shown to the agent

    def run(self, parsed: ParsedOutput, action: int) -> list[Record]:
        """Execute the calls of one action in order; returns their records (all also kept in `self.records`)."""
        by_id: dict[str, Record] = {}
        new: list[Record] = []
        for call in parsed.calls:
            record = self._execute(call.name, call.id, call_arguments(call), action, by_id)
            by_id[call.id] = record
            new.append(record)
            self.records.append(record)
        for record in new:  # the agent sees these outputs from its next turn on
            key = value_key(record.outcome.result) if record.ok else None
            if key is not None:
                self._shown.setdefault(key, set()).add(record.position)
        return new

    def _execute(self, name: str, call_id: str, raw: dict[str, Any], action: int, by_id: dict[str, Record]) -> Record:
        position = len(self.records)
        if name not in self.toolset or name not in self.allowed:
            outcome = ToolOutcome(ok=False, error_kind="unknown_tool", error=f"unknown tool {name!r}")
            return Record(position, action, call_id, name, outcome)
        arguments, sources, unresolved = {}, {}, None
        for key, value in raw.items():
            ref = PLACEHOLDER.fullmatch(value) if isinstance(value, str) else None
            if ref is None:
                arguments[key] = value
                sources[key] = self._derived_from(value)
                continue
            target = by_id.get(ref.group(1))
            if target is None or not target.ok:
                unresolved = value
                break
            arguments[key] = target.outcome.result
            sources[key] = frozenset({target.position}) | target.passthrough
        if unresolved is not None:
            outcome = ToolOutcome(
                ok=False,
                error_kind="unresolved_reference",
                error=f"{unresolved} refers to a call that has not produced an output",
            )
            return Record(position, action, call_id, name, outcome)
        outcome = self.toolset.execute(self.world, name, arguments)
        record = Record(position, action, call_id, name, outcome, sources)
        if outcome.ok:
            out_key = value_key(outcome.result)
            same = [k for k, v in (outcome.arguments or {}).items() if out_key is not None and value_key(v) == out_key]
            record.passthrough = frozenset().union(*(sources.get(k, frozenset()) for k in same))
        return record

    def _derived_from(self, value: Any) -> frozenset[int]:
        key = value_key(value)
        if key is None or key not in self._shown:
            return frozenset()
        positions = self._shown[key]
        out = set(positions)
        for p in positions:
            out |= self.records[p].passthrough
        return frozenset(out)
