"""Running AZR programs in the sandbox, deterministic by construction, many small jobs at once.

A job is one program and a list of argument tuples (`sandbox_job.py`): in the jail (`rlvr_gym.sandboxes.jail`),
with a fixed hash seed, every call in a fresh fork of a sealed process, the program seeing only pure builtins and
facades of the allowed modules. So a call's value is a function of the program text and its arguments: no clock,
entropy, address, environment or earlier call reaches it, whatever the program's names. Values come back as plain
data (`rlvr_gym.sandboxes.python_programs.plain_values`) and are decoded here into fresh builtin objects.
`run_checked` runs every job twice in separate sandbox jobs and refuses programs whose runs disagree (with the
jail this can only trip on a limit hit near its boundary). Batches go through a thread pool over the thread-safe sandbox, so its warm workers
stay busy (a batch of n jobs takes about n / workers job times).
"""

from __future__ import annotations

import importlib.resources
import json
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from rlvr_gym.sandboxes import jail
from rlvr_gym.sandboxes.handle import SandboxHandle, process_wide
from rlvr_gym.sandboxes.python_programs import plain_values
from rlvr_gym.sandboxes.python_programs.job_lines import read_lines
from rlvr_gym.sandboxes.python_programs.plain_values import PlainDataError, decode_tree, encode_tree
from rlvr_gym.types import InfraError

HASH_SEED = 0  # the deterministic mode: every job's Python hashes str/bytes the same way
OUTPUT_BYTES = 2_000_000


@dataclass(frozen=True)
class CallOutcome:
    """One call's result: `value` (decoded plain data) when `ok`, else `error` names why."""

    ok: bool
    value: Any = None
    tree: Any = None  # the plain-data tree as it came back (JSON-able; what determinism compares)
    error: str | None = None


@dataclass(frozen=True)
class JobOutcome:
    loaded: bool
    calls: list[CallOutcome] = field(default_factory=list)
    error: str | None = None

    @property
    def all_ok(self) -> bool:
        return self.loaded and bool(self.calls) and all(c.ok for c in self.calls)


@lru_cache(maxsize=1)
def job_source() -> str:
    """The job script: the shared plain-value codec, the jail, then `sandbox_job.py`."""
    runner = importlib.resources.files(__package__).joinpath("sandbox_job.py").read_text(encoding="utf-8")
    return "\n\n".join([plain_values.source(), jail.source(), runner]) + "\nmain()\n"


def same_calls(first: Sequence[CallOutcome], second: Sequence[CallOutcome]) -> bool:
    """Two runs' calls agree: same outcome and plain-data tree (compared as JSON text, so NaN equals NaN)."""
    key = lambda calls: json.dumps([(c.ok, c.tree) for c in calls], allow_nan=True)  # noqa: E731
    return len(first) == len(second) and key(first) == key(second)


def _call_outcome(record: dict | None) -> CallOutcome:
    if record is None:
        return CallOutcome(False, error="no result (the job died or hit its limit)")
    if "value" in record:
        try:
            return CallOutcome(True, decode_tree(record["value"]), record["value"])
        except PlainDataError as exc:
            return CallOutcome(False, error=f"bad value: {exc}")
    if record.get("timeout"):
        return CallOutcome(False, error="timeout")
    if "raised" in record:
        return CallOutcome(False, error=f"raised {str(record['raised'])[:80]}")
    return CallOutcome(False, error=str(record.get("bad", "no value"))[:200])


class AZRExecutor(SandboxHandle):
    """Deterministic-mode execution of AZR programs on a (shared, thread-safe) sandbox."""

    def __init__(self, sandbox: Any = None, *, call_timeout_s: float = 1.0, memory_mb: int = 256,
                 workers: int | None = None) -> None:
        super().__init__(sandbox)
        self.call_timeout_s = call_timeout_s
        self.memory_mb = memory_mb
        self.workers = workers or max(2, min(16, 2 * (os.cpu_count() or 1)))

    def request(self, source: str, inputs: Sequence[tuple]) -> Any:
        from rlvr_gym.sandboxes import ExecRequest, Limits

        calls = [encode_tree(list(args)) for args in inputs]
        wall = 4.0 + self.call_timeout_s * (3 + len(calls))
        limits = Limits(wall_s=wall, cpu_s=wall, memory_mb=self.memory_mb, output_bytes=OUTPUT_BYTES)
        job = {"program": source, "calls": calls, "call_timeout_s": self.call_timeout_s}
        stdin = json.dumps(job, ensure_ascii=True, allow_nan=True)
        return ExecRequest(code=job_source(), stdin=stdin, limits=limits, hash_seed=HASH_SEED)

    def run(self, source: str, inputs: Sequence[tuple]) -> JobOutcome:
        """One job: `f(*args)` for every args in `inputs`. Raises InfraError when the sandbox itself failed."""
        try:
            request = self.request(source, inputs)
        except PlainDataError as exc:
            return JobOutcome(False, error=f"arguments are not plain data: {exc}")
        result = self.sandbox.run(request)
        status = str(getattr(result.status, "value", result.status))
        if status == "sandbox_error":
            raise InfraError(f"AZR sandbox failed: {result.error}")
        if result.stdout.startswith('{"refused":'):
            raise InfraError(f"AZR job refused: {result.stdout.split(chr(10), 1)[0][:300]}")
        lines = read_lines(result.stdout, len(inputs))
        if not lines.load or lines.load.get("load") is not True:
            why = (lines.load or {}).get("raised") or status
            return JobOutcome(False, error=f"the program did not load ({str(why)[:80]})")
        return JobOutcome(True, [_call_outcome(lines.calls.get(i)) for i in range(len(inputs))])

    def run_many(self, jobs: Sequence[tuple[str, Sequence[tuple]]]) -> list[JobOutcome]:
        """Many jobs at once (the batch API the population uses)."""
        if len(jobs) <= 1:
            return [self.run(*job) for job in jobs]
        with ThreadPoolExecutor(max_workers=min(self.workers, len(jobs))) as pool:
            return list(pool.map(lambda job: self.run(*job), jobs))

    def run_checked(self, jobs: Sequence[tuple[str, Sequence[tuple]]]) -> list[JobOutcome]:
        """Every job twice; a job whose two runs differ in any call is reported as nondeterministic."""
        doubled = self.run_many([*jobs, *jobs])
        out = []
        for first, second in zip(doubled[: len(jobs)], doubled[len(jobs):], strict=True):
            same = first.loaded == second.loaded and same_calls(first.calls, second.calls)
            out.append(first if same else JobOutcome(False, error="the program is not deterministic"))
        return out


shared_executor = process_wide(AZRExecutor)
