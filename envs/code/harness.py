"""The sandbox side of judging, seen from the verifier: the job script, its input, and reading its output.

The job (`sandbox_runner.py` behind `plaindata.py`) gets the candidate program and a batch of calls, and prints
one line per call with the value as plain data. `read_lines` parses those lines strictly and keeps, per call,
the first well-formed line; anything else is ignored. Nothing here is authenticated on purpose: the lines are
read as the values the candidate claims its calls returned, so a forged line is worth exactly what a program
returning that value would earn (see `judge.py`). Exit codes and statuses are diagnostics only.
"""

from __future__ import annotations

import importlib.resources
import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from .plaindata import MAX_CHARS
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
    """The job's `main.py`: the plain-data codec, the runner, and the entry call."""
    files = importlib.resources.files(__package__)
    parts = [files.joinpath(name).read_text(encoding="utf-8") for name in ("plaindata.py", "sandbox_runner.py")]
    return "\n\n".join(parts) + "\nmain()\n"


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


@dataclass
class JobLines:
    """The parsed output of one job: load outcome, one record per answered call, whether it finished."""

    load: dict[str, Any] | None = None
    calls: dict[int, dict[str, Any]] = field(default_factory=dict)
    done: bool = False
    setup_error: str | None = None  # the test setup failed in the sandbox before the candidate loaded


def read_lines(stdout: str, num_calls: int) -> JobLines:
    """Parse a job's stdout; linear in its length, never raises."""
    lines = JobLines()
    for line in stdout.split("\n"):
        if not line.startswith("{") or len(line) > MAX_CHARS + 4096:
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(record, dict):
            continue
        index = record.get("i")
        if record.get("done") is True:
            lines.done = True
        elif "load" in record and lines.load is None:
            lines.load = record
        elif "setup_error" in record and lines.setup_error is None:
            lines.setup_error = str(record["setup_error"])[:300]
        elif type(index) is int and 0 <= index < num_calls and index not in lines.calls:
            lines.calls[index] = record
    return lines
