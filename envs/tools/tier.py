"""TIER's reward components (docs/tools.md), as rubric functions over the evidence the verifier collected itself.

Two reward modes (task kwarg `reward_mode`): `dataflow` (default, below) and `paper` (TIER's components as the paper
defines them, `paper_rubric`). Both judge the same evidence, so both are trajectory-invariant.

Weights as in the paper: format 0.1, tool names 0.1, parameters 0.1, types 0.1, execution 0.1, answer 0.5.
Parameters and types lose `TIER_PENALTY` (0.25 of the component) per mismatch, summed over the episode's calls; a
call to an unknown tool counts each of its arguments as an unknown parameter. Gates as in TIER: a call block that
does not parse zeroes everything; any failed execution removes the answer credit.

Our changes (`dataflow`): the five process components are scaled by `progress`, the share of the task's required
values that grounded calls produced (see `provenance.py`; issues #13, #33), so calls unrelated to the task earn
nothing and the answer counts only when a grounded call produced it. Without the right final answer the process
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
    progress: float = 0.0  # share of the required values produced by grounded calls (1 once the answer is)
    answer_correct: bool = False  # the final answer states the required answer, produced by a grounded call
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


# ---- the paper's reward (`reward_mode="paper"`) ------------------------------------------------------------------


def _format_ok(evidence: Evidence) -> float:
    """TIER's R_format gate: every call block parsed and there was one; when it fails, everything is 0."""
    return float(evidence.syntax_failures == 0 and evidence.calls > 0)


def paper_rubric() -> Rubric:
    """TIER's components as the paper defines them: process credit for any well-formed, executing calls.

    R_format 0.1 (gate), R_name 0.1, R_param/R_dtype 0.1 minus 0.025 per mismatch, R_exec 0.1, R_answer 0.5. The
    answer is still the grounded one (the paper's answer is the executed chain's output, never a typed value).
    This mode keeps TIER's floor: well-formed calls with a wrong answer earn 0.5, above the reward contract's 5%.
    """
    parts = {
        "format": _format_ok,
        "tool_names": lambda evidence: _format_ok(evidence) * float(evidence.unknown_names == 0),
        "params": lambda evidence: _format_ok(evidence) * max(0.0, 1.0 - TIER_PENALTY * evidence.param_mismatches),
        "types": lambda evidence: _format_ok(evidence) * max(0.0, 1.0 - TIER_PENALTY * evidence.type_mismatches),
        "execution": lambda evidence: _format_ok(evidence) * float(evidence.exec_failures == 0),
        "answer": lambda evidence: (
            _format_ok(evidence) * float(evidence.exec_failures == 0 and evidence.answer_correct)
        ),
    }
    return Rubric([Criterion(name, fn, TIER_WEIGHTS[name]) for name, fn in parts.items()], pass_on="answer")


DEFAULT_MODE = "dataflow"
RUBRICS: dict[str, Rubric] = {"dataflow": tier_rubric(), "paper": paper_rubric()}
