"""Match the call chain a task requires against the executor's records.

Step k of a task's chain is a tool, its literal arguments (from the question) and, for k >= 1, the parameter that
must carry step k-1's output. An executed call stands for step k when
- it ran successfully with that tool, the same literal arguments (as the tool validated them) and the same output
  as the reference run;
- for k >= 1, the executor traced its chained argument to a call standing for step k-1 (see `executor.py`), and its
  output differs from that chained input (an identity operation on the chain value is laundering, not a step).
Everything else the agent called is unrelated and earns nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .executor import Record, value_key
from .toolset import Toolset


@dataclass(frozen=True)
class Step:
    name: str
    arguments: dict[str, Any]  # validated by the tool; the chained parameter holds the previous step's output
    chained: str | None
    output: Any


def required_steps(ground_truth: dict[str, Any], toolset: Toolset) -> list[Step]:
    """The task's chain with each step's arguments validated exactly as the tool validates a call's."""
    steps = []
    outputs = ground_truth["outputs"]
    for k, spec in enumerate(ground_truth["chain"]):
        arguments = dict(spec["arguments"])
        if spec["chained"] is not None:
            arguments[spec["chained"]] = outputs[k - 1]
        tool = toolset[spec["name"]]
        validated = tool.args_model.model_validate(arguments)
        steps.append(
            Step(
                spec["name"],
                {f: getattr(validated, f) for f in type(validated).model_fields},
                spec["chained"],
                outputs[k],
            )
        )
    return steps


def _same(a: Any, b: Any) -> bool:
    key = value_key(a)
    return key == value_key(b) if key is not None else a == b


def stands_for(record: Record, step: Step, previous: Sequence[Record] | None) -> bool:
    """Whether `record` is an execution of `step` fed by one of `previous` (the calls standing for step k-1)."""
    arguments = record.outcome.arguments
    if not record.ok or record.name != step.name or arguments is None or not _same(record.outcome.result, step.output):
        return False
    if any(not _same(arguments.get(k), v) for k, v in step.arguments.items() if k != step.chained):
        return False
    if step.chained is None:
        return True
    feeders = {r.position for r in previous or ()}
    if not record.sources.get(step.chained, frozenset()) & feeders:
        return False
    return not _same(record.outcome.result, arguments.get(step.chained))


def match_chain(steps: Sequence[Step], records: Sequence[Record]) -> list[list[Record]]:
    """Calls standing for each step, level by level, stopping at the first step no call stands for."""
    levels: list[list[Record]] = []
    previous: list[Record] | None = None
    for step in steps:
        level = [r for r in records if stands_for(r, step, previous)]
        if not level:
            break
        levels.append(level)
        previous = level
    return levels
