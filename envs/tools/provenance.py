"""Credit from data flow: the values a task needs, and which of them the episode produced by execution.

TIER's reward is trajectory-invariant (no reference trajectory): what counts is what the agent's own calls computed.
A task needs the values of its reference chain (each step's output; the last one is the answer). The reference
chain is one way to get them, not the only one:
- a call is *grounded* when it executed and each argument it was given is a value the question states (the chain's
  literal arguments), a constant of the tool's own schema (an enum member or the parameter's default), or derived
  by the executor from an earlier grounded call (a chain placeholder, or an output shown in an earlier turn; see
  `executor.py`): no argument is a value the agent knew, guessed or typed in from the answer;
- a required value is *produced* when a grounded call that is not a pass-through (its output is not one of its own
  inputs: multiply by one, add zero, rounding a round number; `echoes`) returned it.

Any order, any tools, any argument order: a commutative tool with its arguments swapped, independent calls
permuted, another tool that gives the same value all produce it. What stops laundering is groundedness, not a
script: an identity call on a typed-in answer is a pass-through of an ungrounded value, an unrelated call does not
produce the required value, a skipped step leaves its successor with a typed-in (ungrounded) input.
Residual risk (docs/tools.md): arithmetic tools can combine question literals into other numbers; a policy would
have to search for a combination equal to a required value, which is solving the arithmetic, not guessing it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .executor import Record, value_key
from .toolset import Toolset


def question_literals(ground_truth: dict[str, Any]) -> frozenset[tuple[str, Any]]:
    """Keys of the values the question states: every literal argument of the reference chain."""
    keys = (value_key(v) for step in ground_truth["chain"] for v in step["arguments"].values())
    return frozenset(k for k in keys if k is not None)


def schema_constants(toolset: Toolset, name: str, parameter: str) -> frozenset[tuple[str, Any]]:
    """Keys of the values a tool's schema itself offers for one parameter (enum members, the default)."""
    spec = toolset[name].parameters.get("properties", {}).get(parameter, {})
    values = [*spec.get("enum", ()), *([spec["default"]] if "default" in spec else [])]
    keys = (value_key(v) for v in values)
    return frozenset(k for k in keys if k is not None)


@dataclass(frozen=True)
class Flow:
    """What the episode's executed calls produced, judged from the executor's records alone."""

    grounded: frozenset[int]  # positions of grounded calls
    producers: tuple[tuple[int, ...], ...]  # per required value: grounded non-pass-through calls that returned it

    @property
    def produced(self) -> list[bool]:
        return [bool(p) for p in self.producers]

    @property
    def answer_produced(self) -> bool:
        return bool(self.producers[-1])

    @property
    def progress(self) -> float:
        """Share of the required values produced; 1 once the answer is (any grounded route to it is a solution)."""
        return 1.0 if self.answer_produced else sum(self.produced) / len(self.producers)

    @property
    def related(self) -> frozenset[int]:
        """Calls that produced some required value (everything else is unrelated and earns nothing)."""
        return frozenset(p for positions in self.producers for p in positions)


def is_grounded(record: Record, grounded: frozenset[int] | set[int], literals: frozenset, toolset: Toolset) -> bool:
    """Whether every argument of an executed call is stated, a schema constant, or derived from a grounded call."""
    if not record.ok or record.outcome.arguments is None:
        return False
    for key, sources in record.sources.items():
        if sources & grounded:
            continue
        value = value_key(record.outcome.arguments.get(key))
        if value is None or (value not in literals and value not in schema_constants(toolset, record.name, key)):
            return False
    return True


def echoes(record: Record, literals: frozenset) -> bool:
    """Whether the call's output is one of its own inputs (a pass-through), a value the question states excepted.

    Echoing a stated value is how a side-effect tool reports (`schedule_event` returns the event's name); echoing
    anything else (a typed-in answer, an earlier output) produces nothing new.
    """
    out = value_key(record.outcome.result)
    return (
        out is not None
        and out not in literals
        and any(value_key(v) == out for v in (record.outcome.arguments or {}).values())
    )


def trace(ground_truth: dict[str, Any], records: Sequence[Record], toolset: Toolset) -> Flow:
    """Grounded calls in episode order (sources always point backwards), then the producers of each required value."""
    literals = question_literals(ground_truth)
    grounded: set[int] = set()
    for record in records:
        if is_grounded(record, grounded, literals, toolset):
            grounded.add(record.position)
    wanted = [value_key(v) for v in ground_truth["outputs"]]
    producers = tuple(
        tuple(
            r.position
            for r in records
            if r.position in grounded and not echoes(r, literals) and value_key(r.outcome.result) == want
        )
        if want is not None
        else ()
        for want in wanted
    )
    return Flow(frozenset(grounded), producers)
