"""Building the sandbox job that runs a task's hidden tests, and reading its evidence back.

The verifier trusts only nonce-authenticated records (`ExecResult.evidence`, see `rlvr_gym.sandboxes.base`);
the exit code, stdout and anything the candidate prints count for nothing. A case passes only if its own record
says so; a case without a record (the process died, called `os._exit`, or hit the wall-clock limit) fails.
Passes recorded before such an end still count (partial credit, a design choice): each record is written, unbuffered,
before the next case starts, so a later exit cannot make an earlier failure look like a pass.

What the evidence channel does not stop is stated in `sandbox_harness.py`: code running in the harness's own
process can, with deliberate introspection, reach the reporter and forge records.
"""

from __future__ import annotations

import importlib.resources
import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from .program import Program
from .testsuite import TestSuite


@dataclass(frozen=True)
class CaseResult:
    index: int
    passed: bool
    error: str | None = None
    message: str = ""
    line: int | None = None  # program line of the innermost candidate frame in the traceback


@dataclass(frozen=True)
class TestRun:
    """What the harness proved about one candidate."""

    cases: list[CaseResult]
    loaded: bool  # the candidate module executed without raising
    finished: bool  # the harness reached its `done` record
    status: str  # sandbox status, for diagnostics only
    load_error: str | None = None
    load_line: int | None = None
    setup_errors: list[str] = field(default_factory=list)
    sandbox_error: str | None = None  # the sandbox could not run the job: no judgement was possible

    @property
    def passed_count(self) -> int:
        return sum(case.passed for case in self.cases)

    @property
    def fraction(self) -> float:
        return self.passed_count / len(self.cases) if self.cases else 0.0

    @property
    def runtime_errors(self) -> list[CaseResult]:
        """Cases that failed with an exception other than a failed assertion."""
        return [c for c in self.cases if not c.passed and c.error not in (None, "AssertionError")]


@lru_cache(maxsize=1)
def harness_source() -> str:
    """The harness module text plus its entry call (the job's `main.py`)."""
    body = importlib.resources.files(__package__).joinpath("sandbox_harness.py").read_text(encoding="utf-8")
    return f"{body}\nmain()\n"


def job_stdin(program: Program, suite: TestSuite, case_timeout_s: float, max_timeouts: int = 1) -> str:
    from rlvr_gym.sandboxes.base import NONCE_ENV

    job = {
        "program": program.source,
        "tests": suite.source,
        "case_timeout_s": case_timeout_s,
        "max_timeouts": max_timeouts,
        "nonce_env": NONCE_ENV,
    }
    return json.dumps(job)


def _line(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def read_evidence(
    records: list[dict[str, Any]], num_cases: int, status: str, sandbox_error: str | None = None
) -> TestRun:
    """Turn harness records into a `TestRun`; the first record of each case wins, unknown records are ignored."""
    seen: dict[int, CaseResult] = {}
    loaded, finished = False, False
    load_error: str | None = None
    load_line: int | None = None
    setup_errors: list[str] = []
    for record in records:
        label = record.get("case")
        if record.get("done") is True:
            finished = True
        elif label == "load":
            loaded = record.get("passed") is True
            if not loaded:
                load_error = f"{record.get('error')}: {record.get('message', '')}"
                load_line = _line(record.get("line"))
        elif isinstance(label, str) and label.startswith("setup") and record.get("passed") is not True:
            setup_errors.append(f"{record.get('error')}: {record.get('message', '')}")
        elif isinstance(label, int) and not isinstance(label, bool) and 0 <= label < num_cases and label not in seen:
            seen[label] = CaseResult(
                index=label,
                passed=record.get("passed") is True,
                error=record.get("error") if isinstance(record.get("error"), str) else None,
                message=str(record.get("message", ""))[:300],
                line=_line(record.get("line")),
            )
    cases = [seen.get(i, CaseResult(i, False, error="NoResult", message="no harness record")) for i in range(num_cases)]
    return TestRun(cases, loaded, finished, status, load_error, load_line, setup_errors, sandbox_error)
