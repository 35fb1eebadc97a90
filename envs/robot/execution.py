"""Running robot programs: one sandbox job per program with a batch of world states, replayed by trusted code.

The job (`simulator.py`, the jail and `sandbox_job.py` as text) returns one call log per state, each state run in a
fresh fork of a deterministic process (`rlvr_gym.sandboxes.jail`), so a log is a function of program and state.
Each log is replayed on the parent's own simulator (`replay.py`), so the trace a check sees is always produced
here; the job's claimed end ("ok", "error", "timeout") can only make a run look like one that stopped earlier,
which earns no more than an honest program stopping there. A sandbox that cannot run the job raises `InfraError` (no judgement possible).
"""

from __future__ import annotations

import importlib.resources
import json
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from rlvr_gym.sandboxes.handle import SandboxHandle, process_wide
from rlvr_gym.types import InfraError

from .replay import Replay, replay
from .simulator import Call, WorldState

if TYPE_CHECKING:
    from rlvr_gym.sandboxes.base import ExecRequest, Sandbox

MAX_LINE = 4_000_000


@dataclass(frozen=True)
class RunOutcome:
    """One (program, state) run as the parent established it."""

    trace: tuple[Call, ...]
    end: str  # ok | error | timeout | call_limit | killed (no record came back) | inconsistent
    detail: str = ""
    robot_error: str | None = None  # the robot error that ended the run (one the program caught is no failure)
    line: int | None = None  # program line of the failure, as the job reported it (only used to place penalties)

    @property
    def clean(self) -> bool:
        """Ran to the end (robot errors the program caught aside, as in the original) with a consistent log."""
        return self.end == "ok"


@lru_cache(maxsize=1)
def job_source() -> str:
    """The job script: the simulator, the jail (`rlvr_gym.sandboxes.jail`), then the runner."""
    from rlvr_gym.sandboxes import jail

    files = importlib.resources.files(__package__)
    read = [files.joinpath(name).read_text(encoding="utf-8") for name in ("simulator.py", "sandbox_job.py")]
    return "\n\n".join([read[0], jail.source(), read[1]]) + "\nmain()\n"


def job_input(program: str, runs: list[tuple[WorldState, int | None]], run_timeout_s: float) -> str:
    body = [{"state": s.to_json(), "random_seed": seed} for s, seed in runs]
    return json.dumps({"program": program, "runs": body, "run_timeout_s": run_timeout_s}, ensure_ascii=True)


def read_records(stdout: str, count: int) -> dict[int, dict[str, Any]]:
    """The first well-formed record per run index; linear in the output, never raises. Raises InfraError when the
    job refused to run because its process could not be made deterministic (no verdict is possible)."""
    if stdout.startswith('{"refused":'):
        raise InfraError(f"robot job refused: {stdout.split(chr(10), 1)[0][:300]}")
    records: dict[int, dict[str, Any]] = {}
    for line in stdout.split("\n"):
        if not line.startswith('{"run":') or len(line) > MAX_LINE:
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        index = record.get("run") if isinstance(record, dict) else None
        if type(index) is int and 0 <= index < count and index not in records:
            records[index] = record
    return records


def outcome_of(state: WorldState, seed: int | None, record: dict[str, Any] | None) -> RunOutcome:
    """Replay one run's log on the trusted simulator and combine it with the job's claimed end."""
    if record is None:
        return RunOutcome((), "killed", "the job ended before reporting this run")
    result: Replay = replay(state, record.get("log"), seed)
    if result.reason is not None:
        return RunOutcome(result.trace, "inconsistent", result.reason)
    end = record.get("end")
    end = end if end in ("ok", "error", "timeout", "call_limit") else "error"
    line = record.get("line")
    line = line if type(line) is int and line > 0 else None
    last = result.trace[-1] if result.trace else None
    ended_by_robot = end == "error" and last is not None and last.error is not None and result.robot_error
    robot_error = result.robot_error if ended_by_robot else None
    return RunOutcome(result.trace, end, str(record.get("message") or "")[:300], robot_error, line)


class RobotExecutor(SandboxHandle):
    """Runs programs for the robot envs through a `rlvr_gym.sandboxes` backend (shared, thread-safe)."""

    def __init__(
        self,
        sandbox: Sandbox | None = None,
        *,
        backend: str | None = None,
        run_timeout_s: float = 1.0,
        memory_mb: int = 256,
    ) -> None:
        super().__init__(sandbox, backend)
        self.run_timeout_s = run_timeout_s
        self.memory_mb = memory_mb

    def request(self, program: str, runs: list[tuple[WorldState, int | None]]) -> ExecRequest:
        from rlvr_gym.sandboxes.base import ExecRequest, Limits

        wall = 3.0 + self.run_timeout_s * (len(runs) + 1)
        limits = Limits(wall_s=wall, cpu_s=wall, memory_mb=self.memory_mb, output_bytes=8_000_000, processes=4)
        return ExecRequest(
            code=job_source(), stdin=job_input(program, runs, self.run_timeout_s), limits=limits, hash_seed=0
        )

    def run(self, program: str, runs: list[tuple[WorldState, int | None]]) -> list[RunOutcome]:
        """Every (state, random seed) run of `program` in one sandbox job, each replayed here."""
        result = self.sandbox.run(self.request(program, runs))
        status = str(getattr(result.status, "value", result.status))
        if status == "sandbox_error":
            raise InfraError(f"robot sandbox failed: {result.error or 'sandbox error'}")
        records = read_records(result.stdout, len(runs))
        return [outcome_of(state, seed, records.get(i)) for i, (state, seed) in enumerate(runs)]


shared_executor = process_wide(RobotExecutor)
