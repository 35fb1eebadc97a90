"""The episodes JSONL file: faithful lines, crash-safe resume, one writer at a time.

- Any text survives: a record whose strings cannot be UTF-8 encoded (lone surrogates from a model's output) is
  written with `\\uXXXX` escapes, which JSON readers turn back into the very same string.
- Resume reads the file back: a torn last line (a killed run) is cut off; a broken line in the middle is reported
  by line number; errored episodes are dropped (unless kept) so they run again; the file is rewritten only when
  something was dropped, keeping every good line byte for byte.
- A `RunLock` (fcntl) on `<episodes>.lock` stops a second process from writing the same output.
"""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from pydantic_core import PydanticSerializationError

from .types import Episode


def encode_episode(episode: Episode) -> bytes:
    """One JSONL line; the fast Rust serializer first, ASCII escapes when a string is not valid Unicode."""
    try:
        return episode.model_dump_json().encode("utf-8") + b"\n"
    except (PydanticSerializationError, UnicodeEncodeError):
        return json.dumps(episode.model_dump(mode="json"), ensure_ascii=True).encode("ascii") + b"\n"


def decode_episode(line: bytes | str) -> Episode:
    """Inverse of `encode_episode` (pydantic's own JSON parser refuses escaped lone surrogates)."""
    try:
        return Episode.model_validate_json(line)
    except ValueError:
        return Episode.model_validate(json.loads(line))


@dataclass
class LogScan:
    """What resuming found in an episodes file."""

    episodes: dict[str, Episode] = field(default_factory=dict)  # the finished episodes kept, by id
    corrupt_lines: list[int] = field(default_factory=list)  # 1-based numbers of lines that did not parse
    torn_tail: bool = False  # the last line was cut off mid-write (dropped)
    dropped_errors: int = 0  # errored episodes dropped so that they run again
    duplicates: int = 0  # older records of an id written again later (the last one wins)

    @property
    def rewritten(self) -> bool:
        return bool(self.corrupt_lines or self.torn_tail or self.dropped_errors or self.duplicates)

    def notes(self) -> list[str]:
        """Human-readable lines about anything unusual, for the CLI to print."""
        out = []
        if self.corrupt_lines:
            shown = ", ".join(map(str, self.corrupt_lines[:20])) + (" ..." if len(self.corrupt_lines) > 20 else "")
            out.append(f"{len(self.corrupt_lines)} corrupted line(s) dropped and their episodes re-run: line {shown}")
        if self.torn_tail:
            out.append("a torn last line (interrupted write) was dropped")
        if self.dropped_errors:
            out.append(f"{self.dropped_errors} errored episode(s) will be retried")
        if self.duplicates:
            out.append(f"{self.duplicates} superseded duplicate record(s) dropped")
        return out


class EpisodeLog:
    """Append-only JSONL of episodes."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._file: IO[bytes] | None = None

    def scan(self, *, keep_errors: bool = False) -> LogScan:
        """Read finished episodes and clean the file for appending (see the module docstring)."""
        scan = LogScan()
        if not self.path.exists():
            return scan
        lines = self.path.read_bytes().split(b"\n")
        tail = lines.pop()  # b"" when the file ends with a newline
        scan.torn_tail = bool(tail.strip())
        kept: dict[str, bytes] = {}
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                episode = decode_episode(line)
            except ValueError:
                scan.corrupt_lines.append(number)
                continue
            if episode.error is not None and not keep_errors:
                scan.dropped_errors += 1
                continue
            if episode.episode_id in kept:
                scan.duplicates += 1
                del kept[episode.episode_id]  # re-insert so that file order follows the newest record
            kept[episode.episode_id] = line
            scan.episodes[episode.episode_id] = episode
        if scan.rewritten:
            self._rewrite(kept.values())
        return scan

    def _rewrite(self, lines: Any) -> None:
        tmp = self.path.with_name(self.path.name + ".tmp")
        with tmp.open("wb") as f:
            for line in lines:
                f.write(line + b"\n")
        os.replace(tmp, self.path)

    def read_finished(self) -> dict[str, Episode]:
        """Episodes on disk by id, errored ones included (no rewrite beyond dropping a torn tail)."""
        return self.scan(keep_errors=True).episodes

    def open(self, append: bool) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("ab" if append else "wb")

    def write(self, episode: Episode) -> None:
        """One whole line per call, flushed (no fsync: a torn tail after a power cut is cut off on resume)."""
        assert self._file is not None, "open() the log first"
        self._file.write(encode_episode(episode))
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class RunLocked(RuntimeError):
    """Another process holds the output's lock."""


class RunLock:
    """An exclusive, non-blocking fcntl lock on `<output>.lock`; released on `release` or process exit."""

    def __init__(self, output: str | Path) -> None:
        self.path = Path(output).with_name(Path(output).name + ".lock")
        self._fd: int | None = None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 64).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise RunLocked(
                f"{self.path.with_suffix('')} is being written by another run (pid {holder}); "
                "wait for it to finish or choose another output"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
