"""The sandbox side of judging, seen from the verifier: the job script, its input, and what judging proved.

The job (`sandbox_runner.py` behind the shared plain-value codec, `rlvr_gym.sandboxes.python_programs.plain_values`)
gets the candidate program and a batch of calls, and prints one line per call with the value as plain data;
`rlvr_gym.sandboxes.python_programs.job_lines.read_lines` reads them back, unauthenticated on purpose: a forged
line is worth exactly what a program returning that value would earn (see `judge.py`).
"""

from __future__ import annotations

import importlib.resources
import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from rlvr_gym.sandboxes.python_programs import plain_values

from .program import Program


@dataclass(frozen=True)
class CaseResult:
    index: int
    passed: bool
    error: str | None = None
    message: str = ""
    line: int | None = None  # program line of the innermost candidate frame of a failing call


@dataclass(frozen=True)
class TestRun:
    """What judging proved about one candidate."""

    cases: list[CaseResult]
    loaded: bool  # the candidate module loaded without raising (as its job reported)
    finished: bool  # every sandbox job ran to its `done` line
    status: str  # sandbox status of the last job, for diagnostics only
    load_error: str | None = None
    load_line: int | None = None
    setup_errors: list[str] = field(default_factory=list)
    sandbox_error: str | None = None  # the sandbox could not run a job: no judgement was possible
    mode: str = "values"
    jobs: int = 0  # sandbox jobs used
    calls: int = 0  # distinct candidate calls made

    @property
    def passed_count(self) -> int:
        return sum(case.passed for case in self.cases)

    @property
    def fraction(self) -> float:
        return self.passed_count / len(self.cases) if self.cases else 0.0

    @property
    def runtime_errors(self) -> list[CaseResult]:
        """Cases that failed with anything other than a failed assertion."""
        return [c for c in self.cases if not c.passed and c.error not in (None, "AssertionError")]


@lru_cache(maxsize=1)
def runner_source() -> str:
    """The job's `main.py`: the plain-value codec, the runner, and the entry call."""
    runner = importlib.resources.files(__package__).joinpath("sandbox_runner.py").read_text(encoding="utf-8")
    return "\n\n".join([plain_values.source(), runner]) + "\nmain()\n"


def job_input(
    program: Program,
    calls: list[dict[str, Any]],
    setup: str,
    call_timeout_s: float,
    max_timeouts: int,
    setup_after: bool = False,
) -> str:
    """The job's stdin: the candidate program and call arguments only (no expected values, no asserts)."""
    job = {
        "program": program.source,
        "calls": calls,
        "setup": setup,
        "setup_after": setup_after,
        "call_timeout_s": call_timeout_s,
        "max_timeouts": max_timeouts,
    }
    return json.dumps(job, ensure_ascii=True, allow_nan=True)
