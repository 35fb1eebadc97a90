"""Offline scoring of outputs with an env's verifier (`rlvr-gym verify`): external model outputs or `eval` episodes.

Input rows are JSONL objects naming a task (`task`, `task_index` or `task_id`) and the response (`output`, a
string, or `outputs`, a list of strings for multi-turn), or whole `Episode` records from `rlvr-gym eval` (the
actions are read from `turns`). Reading never gives up on a file: a BOM is accepted, blank lines are skipped, and
every line that is not JSON, not an object, or has fields of the wrong type is reported with its line number and a
typed error while the other rows are scored. Types are checked strictly: `task_index` 1.9 or `true` is refused,
and a string `outputs` is refused rather than scored character by character.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from .family import parse_task_id
from .types import InfraError, Outcome, Task, Verdict

ID_INDEX_LIMIT = 100_000  # finite envs up to this size get a full task-id index for lookups


class OutputRow(BaseModel):
    """One input row; strict types, unknown fields kept (they are copied to the scored output)."""

    model_config = ConfigDict(extra="allow", strict=True)

    task: dict[str, Any] | None = None
    task_index: int | None = None
    task_id: str | None = None
    output: str | None = None
    outputs: list[str] | None = None
    turns: list[dict[str, Any]] | None = None
    error: dict[str, Any] | None = None  # an `eval` record of an errored episode: nothing to score

    def actions(self) -> list[str]:
        if self.outputs is not None:
            return self.outputs
        if self.output is not None:
            return [self.output]
        if self.turns is not None:
            actions = [turn.get("action") for turn in self.turns]
            if not all(isinstance(a, str) for a in actions):
                raise RowError("invalid_row", "every turn needs a string `action`")
            return actions  # type: ignore[return-value]
        raise RowError("invalid_row", "the row has no `output`, `outputs` or `turns`")


class RowError(Exception):
    """Why a row could not be scored: `kind` is one of not_json, not_object, invalid_row, unknown_task,
    verifier_error, env_error, source_error."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass
class ReadResult:
    rows: list[tuple[int, OutputRow]] = field(default_factory=list)  # (1-based line number, row)
    problems: list[dict[str, Any]] = field(default_factory=list)
    blank_lines: int = 0


def read_rows(path: str | Path) -> ReadResult:
    """Parse a JSONL file line by line; a BOM is skipped; bad lines become problems, never exceptions."""
    result = ReadResult()
    text = Path(path).read_bytes().decode("utf-8-sig", errors="surrogateescape")
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            result.blank_lines += 1
            continue
        try:
            data = json.loads(line)
        except ValueError as exc:
            result.problems.append(problem(number, RowError("not_json", f"not JSON: {exc}")))
            continue
        if not isinstance(data, dict):
            result.problems.append(
                problem(number, RowError("not_object", f"a row must be a JSON object, got {type(data).__name__}"))
            )
            continue
        try:
            result.rows.append((number, OutputRow.model_validate(data)))
        except ValidationError as exc:
            details = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            result.problems.append(problem(number, RowError("invalid_row", details)))
    result.blank_lines -= 1 if text.endswith("\n") or not text else 0  # the final newline is not a blank line
    return result


def problem(line: int, error: RowError) -> dict[str, Any]:
    return {"line": line, "kind": error.kind, "message": str(error)}


class TaskResolver:
    """Finds a row's task by full task, index, or id (`family/split/index`, or any id via a lazy index)."""

    def __init__(self, env: Any) -> None:
        self.env = env
        self._by_id: dict[str, int] | None = None

    def _get(self, index: int) -> Task:
        n = self.env.num_tasks
        if index < 0 or (n is not None and index >= n):
            raise RowError("unknown_task", f"task_index {index} out of range" + (f" 0..{n - 1}" if n else ""))
        return self.env.get_task(index)

    def __call__(self, row: OutputRow) -> Task:
        if row.task is not None:
            try:
                return self.env.coerce_task(row.task)
            except ValidationError as exc:
                raise RowError("invalid_row", f"task: {exc.errors()[0]['msg']}") from exc
        if row.task_index is not None:
            return self._get(row.task_index)
        if row.task_id is None:
            raise RowError("invalid_row", "the row names no task (task, task_index or task_id)")
        return self._by_task_id(row.task_id)

    def _by_task_id(self, task_id: str) -> Task:
        for index in _index_candidates(task_id):
            try:
                task = self._get(index)
            except (RowError, IndexError, ValueError):
                continue
            if task.id == task_id:
                return task
        by_id = self._index()
        if task_id in by_id:
            return self.env.get_task(by_id[task_id])
        raise RowError("unknown_task", f"cannot resolve task id {task_id!r}: give task_index or the full task")

    def _index(self) -> dict[str, int]:
        if self._by_id is None:
            n = self.env.num_tasks
            self._by_id = (
                {self.env.get_task(i).id: i for i in range(n)} if n is not None and n <= ID_INDEX_LIMIT else {}
            )
        return self._by_id


def _index_candidates(task_id: str) -> list[int]:
    """Indices a task id may encode: `family/split/index`, else its last few digit runs (`echo-7`, `maze:3`)."""
    try:
        return [parse_task_id(task_id)[2]]
    except ValueError:
        pass
    runs = re.findall(r"\d{1,18}", task_id[-200:])
    return [int(run) for run in reversed(runs[-3:])]


def outcome_of(verdict: Verdict) -> Outcome:
    return Outcome.SCORED if verdict.valid else Outcome.INVALID


def score_row(env: Any, resolve: TaskResolver, row: OutputRow) -> tuple[Task, Verdict]:
    if row.error is not None:
        raise RowError(
            "source_error", f"the source episode ended in an infrastructure error: {row.error.get('kind', '?')}"
        )
    task = resolve(row)
    actions = row.actions()
    try:
        return task, env.verify(task, actions)
    except InfraError as exc:
        raise RowError("verifier_error", f"{type(exc).__name__}: {exc}") from exc
    except Exception as exc:
        raise RowError("env_error", f"{type(exc).__name__}: {exc}") from exc


def rescore(env: Any, path: str | Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Score every readable row; returns the scored records and a summary (same keys as `eval`'s where they apply)."""
    read = read_rows(path)
    resolve = TaskResolver(env)
    scored: list[dict[str, Any]] = []
    problems = list(read.problems)
    for number, row in read.rows:
        try:
            task, verdict = score_row(env, resolve, row)
        except RowError as exc:
            problems.append(problem(number, exc))
            continue
        record = row.model_dump(exclude_none=True)
        record.update(
            {
                "line": number,
                "task_id": task.id,
                "task_index": task.metadata.get("index", row.task_index),
                "reward": verdict.reward,
                "outcome": outcome_of(verdict).value,
                "verdict": verdict.model_dump(mode="json"),
            }
        )
        scored.append(record)
    problems.sort(key=lambda p: p["line"])
    return scored, summarize_scored(scored, problems, read.blank_lines)


def summarize_scored(scored: list[dict[str, Any]], problems: list[dict[str, Any]], blank_lines: int) -> dict[str, Any]:
    rewards = [r["reward"] for r in scored]
    outcomes = Counter(r["outcome"] for r in scored)
    errors = Counter(p["kind"] for p in problems)
    components: dict[str, list[float]] = {}
    for r in scored:
        for name, value in r["verdict"]["components"].items():
            components.setdefault(name, []).append(value)
    n = len(scored)
    return {
        "rows": n + len(problems),
        "rewarded": n,
        "mean_reward": sum(rewards) / n if n else 0.0,
        "pass_rate": sum(r["verdict"]["passed"] for r in scored) / n if n else 0.0,
        "components": {k: sum(v) / len(v) for k, v in sorted(components.items())},
        "outcomes": {
            "scored": outcomes.get("scored", 0),
            "invalid": outcomes.get("invalid", 0),
            "error": len(problems),
        },
        "error_count": len(problems),
        "errors": dict(sorted(errors.items())),
        "problems": problems,
        "blank_lines": blank_lines,
    }
