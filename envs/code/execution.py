"""Running candidate code in the sandbox: the call batches of the judge and the agent's `run` snippets.

Everything that executes untrusted code goes through a `rlvr_gym.sandboxes` backend; nothing here runs candidate
code in this process. Batches use a thread pool over `Sandbox.run` (backends are thread-safe), so the sandbox's
warm workers are kept busy when a whole dataset is scored.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from rlvr_gym.sandboxes.handle import SandboxHandle, process_wide
from rlvr_gym.sandboxes.python_programs.job_lines import JobLines, read_lines

from .harness import TestRun, job_input, runner_source
from .judge import judge
from .program import Program
from .testsuite import TestPlan

OUTPUT_BYTES = 16_000_000  # room for many plain-data values; a value is at most plain_values.MAX_CHARS

if TYPE_CHECKING:
    from rlvr_gym.sandboxes.base import ExecResult, Limits, Sandbox


class CodeExecutor(SandboxHandle):
    """Runs test jobs and snippets for the code envs; owns (or borrows) one sandbox."""

    def __init__(
        self,
        sandbox: Sandbox | None = None,
        *,
        backend: str | None = None,
        case_timeout_s: float = 2.0,
        max_timeouts: int = 1,
        max_test_wall_s: float = 60.0,
        memory_mb: int = 512,
        run_wall_s: float = 5.0,
        workers: int | None = None,
    ) -> None:
        super().__init__(sandbox, backend)
        self.case_timeout_s = case_timeout_s
        self.max_timeouts = max_timeouts
        self.max_test_wall_s = max_test_wall_s
        self.memory_mb = memory_mb
        self.run_wall_s = run_wall_s
        self.workers = workers or max(2, min(32, 4 * (os.cpu_count() or 1)))

    def _limits(self, wall_s: float) -> Limits:
        from rlvr_gym.sandboxes.base import Limits

        return Limits(wall_s=wall_s, cpu_s=wall_s, memory_mb=self.memory_mb)

    def run_tests(self, program: Program, plan: TestPlan) -> TestRun:
        """Judge `program` against `plan`: tests here, candidate calls in sandbox jobs (see `judge.py`)."""

        def run_job(calls: list[dict[str, Any]]) -> tuple[JobLines | None, str, str | None]:
            result = self.sandbox.run(self.calls_request(program, plan, calls))
            error = _sandbox_error(result)
            return (None if error else read_lines(result.stdout, len(calls))), _status(result), error

        return judge(plan, run_job)

    def calls_request(self, program: Program, plan: TestPlan, calls: list[dict[str, Any]]) -> Any:
        """One sandbox job computing `calls` (arguments only; the job's stdin carries nothing secret)."""
        from rlvr_gym.sandboxes.base import ExecRequest

        wall = min(self.max_test_wall_s, 5.0 + self.case_timeout_s * (self.max_timeouts + 2) + 0.02 * len(calls))
        limits = self._limits(wall).model_copy(update={"output_bytes": OUTPUT_BYTES})
        stdin = job_input(program, calls, plan.setup, self.case_timeout_s, self.max_timeouts, plan.setup_after)
        return ExecRequest(code=runner_source(), stdin=stdin, limits=limits)

    def run_tests_many(self, jobs: Sequence[tuple[Program, TestPlan]]) -> list[TestRun]:
        if len(jobs) <= 1:
            return [self.run_tests(p, s) for p, s in jobs]
        with ThreadPoolExecutor(max_workers=min(self.workers, len(jobs))) as pool:
            return list(pool.map(lambda job: self.run_tests(*job), jobs))

    def run_snippet(self, program: Program) -> ExecResult:
        """Execute the agent's code as a script (`__name__ == "__main__"`), for the `run` action."""
        from rlvr_gym.sandboxes.base import ExecRequest

        return self.sandbox.run(ExecRequest(code=program.source, limits=self._limits(self.run_wall_s)))


def _status(result: ExecResult) -> str:
    status = result.status
    return str(getattr(status, "value", status))


def _sandbox_error(result: ExecResult) -> str | None:
    return (result.error or "sandbox error") if _status(result) == "sandbox_error" else None


shared_executor = process_wide(CodeExecutor)
