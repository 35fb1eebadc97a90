"""An index of a run's episodes JSONL: one small row per episode plus its byte offset, never the whole records.

A run with 100,000 episodes is scanned once (the index is cached under the user cache, keyed by path, size and
modification time); the table pages filter and sort these rows, and an episode page reads its one line back by
offset. Broken lines (not JSON, too deeply nested, or JSON of the wrong shape) are counted and skipped, as
`rlvr-gym eval --resume` would report them: one bad line never stops the viewer.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..http_guard import RequestRefused, loads_bounded

INDEX_VERSION = 1
MAX_DEPTH = 200  # episodes nest messages, parts and tool calls; far deeper is a hostile or broken line


@dataclass
class Row:
    """What the episode table shows about one episode."""

    line: int
    offset: int
    length: int
    episode_id: str
    env_id: str
    task_id: str
    sample_index: int
    reward: float | None
    passed: bool
    outcome: str
    error: str | None
    turns: int
    seconds: float
    components: dict[str, float] = field(default_factory=dict)


def row_of(record: dict[str, Any], line: int, offset: int, length: int) -> Row:
    verdict = record.get("verdict") or {}
    error = record.get("error") or None
    outcome = record.get("outcome") or ("error" if error else "invalid" if verdict.get("valid") is False else "scored")
    reward = None if error else (verdict.get("reward") if verdict else record.get("total_reward"))
    return Row(line=line, offset=offset, length=length, episode_id=str(record.get("episode_id", "")),
               env_id=str(record.get("env_id", "")), task_id=str(record.get("task_id", "")),
               sample_index=int(record.get("sample_index") or 0),
               reward=float(reward) if isinstance(reward, int | float) else None,
               passed=bool(verdict.get("passed")) and not error, outcome=str(outcome),
               error=(error or {}).get("kind") if isinstance(error, dict) else None,
               turns=len(record.get("turns") or []), seconds=float((record.get("timings") or {}).get("total_s", 0.0)),
               components={k: float(v) for k, v in (verdict.get("components") or {}).items()
                           if isinstance(v, int | float)})


@dataclass
class RunIndex:
    """Rows of one episodes file, the run folder's summary/manifest, and the count of unreadable lines."""

    path: Path
    rows: list[Row]
    broken_lines: list[int]

    @property
    def folder(self) -> Path:
        return self.path.parent

    def read_json(self, name: str) -> dict[str, Any] | None:
        candidates = [self.folder / name, self.path.with_name(self.path.name.removesuffix(".jsonl") + "." + name)]
        for candidate in candidates:
            if candidate.is_file():
                try:
                    return json.loads(candidate.read_text(encoding="utf-8"))
                except ValueError:
                    return None
        return None

    def episode(self, position: int) -> dict[str, Any]:
        """The full record of the episode at `position` in `rows`, read back by offset."""
        row = self.rows[position]
        with self.path.open("rb") as f:
            f.seek(row.offset)
            record = loads_bounded(f.read(row.length), MAX_DEPTH)
        if not isinstance(record, dict):
            raise ValueError("the line is not a JSON object (the file changed since it was indexed?)")
        return record


def scan(path: Path) -> tuple[list[Row], list[int]]:
    rows, broken = [], []
    offset = 0
    with path.open("rb") as f:
        for number, raw in enumerate(f, start=1):
            length = len(raw)
            text = raw.strip()
            if text:
                try:
                    record = loads_bounded(text, MAX_DEPTH)
                    if not isinstance(record, dict):
                        raise ValueError("not an object")
                    rows.append(row_of(record, number, offset, length))
                except (RequestRefused, ValueError, TypeError, AttributeError, OverflowError):
                    broken.append(number)
            offset += length
    return rows, broken


def cache_file(path: Path) -> Path:
    stat = path.stat()
    key = hashlib.sha256(f"{INDEX_VERSION}|{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()
    root = Path(os.environ.get("RLVR_GYM_CACHE", Path.home() / ".cache" / "rlvr-gym")) / "viewer"
    return root / f"{key[:32]}.json"


def load_run(target: str | Path) -> RunIndex:
    """Index `target` (an episodes JSONL, or a folder holding `episodes.jsonl`), reusing a cached index."""
    path = Path(target)
    if path.is_dir():
        path = path / "episodes.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"no episodes file at {path}")
    cached = cache_file(path)
    if cached.is_file():
        try:
            data = json.loads(cached.read_text())
            return RunIndex(path, [Row(**r) for r in data["rows"]], data["broken"])
        except (ValueError, KeyError, TypeError):
            pass
    rows, broken = scan(path)
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(".tmp")
        tmp.write_text(json.dumps({"rows": [asdict(r) for r in rows], "broken": broken}))
        tmp.replace(cached)
    except OSError:
        pass  # a read-only cache only costs a rescan next time
    return RunIndex(path, rows, broken)
