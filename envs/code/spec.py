"""The hidden part of a code task: how to assemble the candidate program and which tests judge it.

A `CodeSpec` is the `Task.ground_truth` of every code env, so a task is re-scorable from its JSON alone. Two test
styles are supported because the public datasets use them: HumanEval's `check(candidate)` function (`check_source`)
and MBPP's list of assert statements (`asserts`). Both are split into individual test cases by `testsuite.py`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from rlvr_gym.types import Task


class CodeSpec(BaseModel):
    """Everything the verifier needs to judge a solution for one task."""

    entry_point: str = Field(description="Name of the function the tests call.")
    preamble: str = Field(
        default="", description="Code placed before the agent's code (HumanEval prompt: imports, helpers, stub)."
    )
    test_style: Literal["check", "asserts"] = "asserts"
    check_source: str = Field(default="", description="HumanEval-style test module defining check(candidate).")
    asserts: list[str] = Field(default_factory=list, description="One assert statement per test (MBPP style).")
    test_setup: str = Field(default="", description="Code run before the asserts (MBPP test_setup_code/imports).")
    reference_solution: str = Field(default="", description="Known-good code (the agent-side text, not preamble).")


def spec_of(task: Task) -> CodeSpec:
    """The task's `CodeSpec`, accepting the dict form that JSON round-trips produce."""
    truth: Any = task.ground_truth
    return truth if isinstance(truth, CodeSpec) else CodeSpec.model_validate(truth)
