"""TIER's reward components (docs/tools.md), as rubric functions over the evidence the verifier collected itself.

Weights as in the paper: format 0.1, tool names 0.1, parameters 0.1, types 0.1, execution 0.1, answer 0.5.
Parameters and types lose `TIER_PENALTY` (0.25 of the component) per mismatch, summed over the episode's calls; a
call to an unknown tool counts each of its arguments as an unknown parameter. Gates as in TIER: a call block that
does not parse zeroes everything; any failed execution removes the answer credit.

Our changes: the five process components are scaled by `progress`, the share of the task's required chain that
the executor saw carried out (see `provenance.py`; issue #13), so calls unrelated to the task earn nothing and the
answer counts only when it is the output of the executed chain. Without the right final answer the process
components keep only `UNANSWERED_SHARE` of their value (issue #42): TIER pays 0.5 for a complete chain whatever
the answer, which makes stopping one step short of the answer a stable floor; here a complete chain with a wrong
answer earns 0.04 and still ranks above half a chain (0.02), so the dense signal keeps its order.
"""

from __future__ import annotations

from dataclasses import dataclass

from rlvr_gym import Criterion, Rubric

TIER_WEIGHTS: dict[str, float] = {
    "format": 0.1,
    "tool_names": 0.1,
    "params": 0.1,
    "types": 0.1,
    "execution": 0.1,
    "answer": 0.5,
}
TIER_PENALTY = 0.25
UNANSWERED_SHARE = 0.08  # share of the process credit kept without the right final answer (<= 0.04 in all)


@dataclass
class Evidence:
    """What the verifier observed over an episode (counts from the parser and the executor, not the model)."""

    syntax_failures: int = 0
    calls: int = 0
    unknown_names: int = 0
    param_mismatches: int = 0
    type_mismatches: int = 0
    exec_failures: int = 0
    progress: float = 0.0  # share of the required chain's steps executed with traced provenance
    answer_correct: bool = False  # the final answer is the output of the executed required chain
    unrelated_calls: int = 0


def _chain(e: Evidence) -> float:
    """The share of the required chain carried out, when every call block parsed."""
    return float(e.syntax_failures == 0 and e.calls > 0) * e.progress


def _parsed(e: Evidence) -> float:
    """What the process components are scaled by: the chain share, mostly withheld until the answer is right."""
    return _chain(e) * (1.0 if e.answer_correct else UNANSWERED_SHARE)


def format_part(evidence: Evidence) -> float:
    return _parsed(evidence)


def tool_names_part(evidence: Evidence) -> float:
    return _parsed(evidence) * float(evidence.unknown_names == 0)


def params_part(evidence: Evidence) -> float:
    return _parsed(evidence) * max(0.0, 1.0 - TIER_PENALTY * evidence.param_mismatches)


def types_part(evidence: Evidence) -> float:
    return _parsed(evidence) * max(0.0, 1.0 - TIER_PENALTY * evidence.type_mismatches)


def execution_part(evidence: Evidence) -> float:
    return _parsed(evidence) * float(evidence.exec_failures == 0)


def answer_part(evidence: Evidence) -> float:
    return float(_chain(evidence) == 1.0 and evidence.exec_failures == 0 and evidence.answer_correct)


def tier_rubric(weights: dict[str, float] | None = None) -> Rubric:
    """The TIER rubric; `weights` overrides some of `TIER_WEIGHTS`. Passing means full answer credit."""
    parts = {
        "format": format_part,
        "tool_names": tool_names_part,
        "params": params_part,
        "types": types_part,
        "execution": execution_part,
        "answer": answer_part,
    }
    rubric = Rubric([Criterion(name, fn, TIER_WEIGHTS[name]) for name, fn in parts.items()], pass_on="answer")
    return rubric.with_weights(weights) if weights else rubric
