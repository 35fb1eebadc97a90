"""TIER reward (METHODS.md §5): named components from execution alone, no reference trajectory.

Components are on [0, 1] and weighted like the paper: format 0.1, tool names 0.1, parameters 0.1, types 0.1,
execution 0.1, answer 0.5. Parameter and type components lose `penalty` (0.25, i.e. 0.025 of the 0.1 weight) per
mismatch, summed over all calls, each call checked against its own schema; a call to an unknown tool has an empty
schema, so each of its arguments counts as an unknown parameter (as in TIER's validator). Gates as in TIER: no valid
call block -> everything 0; any failed execution -> no answer credit.

Multi-turn adaptation [INFERRED]: counts are summed over the episode's turns, format requires every action to parse
and at least one call overall, execution requires every call of the episode to succeed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rlvr_gym import Criterion, Rubric, Verdict
from rlvr_gym.toolcalls import PARAM_KINDS, TYPE_KINDS, ParsedOutput, call_arguments

from .toolset import ToolOutcome

TIER_WEIGHTS: dict[str, float] = {"format": 0.1, "tool_names": 0.1, "params": 0.1, "types": 0.1, "execution": 0.1,
                                  "answer": 0.5}
TIER_PENALTY = 0.25


@dataclass
class TierTally:
    """Running counts over an episode's actions."""

    actions: int = 0
    syntax_failures: int = 0
    calls: int = 0
    unknown_names: int = 0
    param_mismatches: int = 0
    type_mismatches: int = 0
    exec_failures: int = 0
    notes: list[str] = field(default_factory=list)

    def add_parse(self, parsed: ParsedOutput) -> None:
        self.actions += 1
        if not parsed.syntax_ok:
            self.syntax_failures += 1
        self.calls += len(parsed.calls)
        self.param_mismatches += parsed.count(PARAM_KINDS)
        self.type_mismatches += parsed.count(TYPE_KINDS)
        for error in parsed.errors:
            if error.kind == "unknown_tool":
                self.unknown_names += 1
                if error.call_index is not None:
                    self.param_mismatches += len(call_arguments(parsed.calls[error.call_index]))
            self.notes.append(error.describe())

    def add_outcomes(self, outcomes: list[ToolOutcome]) -> None:
        self.exec_failures += sum(1 for o in outcomes if not o.ok)


def tier_rubric(weights: dict[str, float] | None = None) -> Rubric:
    weights = {**TIER_WEIGHTS, **(weights or {})}
    return Rubric([Criterion(name, _given(name), w) for name, w in weights.items()], pass_on="answer")


def _given(name: str):
    return lambda **components: components[name]


def tier_components(tally: TierTally, answer_correct: bool, *, penalty: float = TIER_PENALTY) -> dict[str, float]:
    """Component values in [0, 1] with TIER's gates applied."""
    fmt = float(tally.syntax_failures == 0 and tally.calls > 0)
    if not fmt:
        return dict.fromkeys(TIER_WEIGHTS, 0.0)
    execution = float(tally.exec_failures == 0)
    return {
        "format": 1.0,
        "tool_names": float(tally.unknown_names == 0),
        "params": max(0.0, 1.0 - penalty * tally.param_mismatches),
        "types": max(0.0, 1.0 - penalty * tally.type_mismatches),
        "execution": execution,
        "answer": float(answer_correct and execution > 0),
    }


def tier_verdict(
    tally: TierTally, answer_correct: bool, *, rubric: Rubric | None = None, penalty: float = TIER_PENALTY,
    feedback: str | None = None,
) -> Verdict:
    rubric = rubric or tier_rubric()
    components = tier_components(tally, answer_correct, penalty=penalty)
    verdict = rubric.combine(components, feedback=feedback)
    metrics = {"calls": float(tally.calls), "param_mismatches": float(tally.param_mismatches),
               "type_mismatches": float(tally.type_mismatches), "exec_failures": float(tally.exec_failures)}
    return verdict.model_copy(update={"components": {**verdict.components, **metrics}})
