"""Reading a call job's output: the JSON lines a runner inside the sandbox prints, one record per call.

The code and AZR runners print `{"load": ...}`, then per call `{"i": k, ...}` (a plain-data `"value"`, or why
there is none), then `{"done": true}`. `read_lines` parses them strictly and keeps, per call, the first
well-formed line; anything else is ignored. Nothing here is authenticated on purpose: the lines are read as the
values the candidate claims its calls returned, so a forged line is worth exactly what a program returning that
value would earn. Exit codes and statuses are diagnostics only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .plain_values import MAX_CHARS


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
