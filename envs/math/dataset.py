"""Math tasks from JSONL or parquet files with question/answer fields (GSM8K and MATH conventions).

Gold answers are normalised on load: GSM8K's `... #### 1,234` becomes `1234`, a MATH solution's last
`\\boxed{...}` becomes its content, anything else is kept as written (minus `$` wrappers and a final period).
Rows are split by a hash of the question (`split_of`: 10% eval), so train and eval never share a question, and a
question repeated in the files is kept once. Optional row fields: `level`/`difficulty` (an int 1..5 is kept),
`answer_form` (`integer`, `lowest_terms`, `simplest_radical`) and `unit`, which the verifier then enforces.
"""

from __future__ import annotations

import functools
import json
import os
import threading
from collections.abc import Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from rlvr_gym import Task
from rlvr_gym.family import DIFFICULTY, TaskSource, split_of

from .extract import boxed_spans
from .tasks import prompt_for, reference_action
from .verifier import FORMS

SAMPLE_FILE = "gsm8k_style_sample.jsonl"
QUESTION_FALLBACKS = ("question", "problem", "prompt")
ANSWER_FALLBACKS = ("answer", "solution", "final_answer")
Files = str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None


def sample_path() -> Path:
    """The bundled sample file (20 GSM8K-style problems written for this project)."""
    return Path(str(resources.files("rlvr_gym.envs.math") / "data" / SAMPLE_FILE))


def normalize_gold(raw: Any) -> str | None:
    """The final answer inside a dataset's answer field, or None if there is none."""
    if raw is None:
        return None
    text = str(raw).strip()
    if "####" in text:
        text = text.rsplit("####", 1)[1].strip()
        plain = text.replace(",", "")
        text = plain if plain.lstrip("-").replace(".", "", 1).isdigit() else text
    elif "\\boxed" in text or "\\fbox" in text:
        spans = [span for span in boxed_spans(text, max_chars=10_000)[0] if span.strip()]
        if not spans:
            return None
        text = spans[-1].strip()
    if len(text) >= 2 and text.startswith("$") and text.endswith("$"):
        text = text.strip("$").strip()
    text = text.rstrip(".").strip()
    return text or None


def _rows_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not valid JSON ({exc.msg})") from exc
            if isinstance(row, dict):
                yield row


def _rows_parquet(path: Path) -> Iterator[dict[str, Any]]:
    import pyarrow.parquet as pq

    yield from pq.read_table(path).to_pylist()


def read_rows(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    path = Path(path)
    suffixes = "".join(path.suffixes).lower()
    if suffixes.endswith((".parquet", ".pq")):
        return _rows_parquet(path)
    if suffixes.endswith((".jsonl", ".json")):
        return _rows_jsonl(path)
    raise ValueError(f"{path}: unsupported file type (use .jsonl or .parquet)")


def _field(row: dict[str, Any], name: str | None, fallbacks: Sequence[str]) -> Any:
    if name is not None:
        return row.get(name)
    return next((row[key] for key in fallbacks if row.get(key) not in (None, "")), None)


def file_list(data_files: Files) -> list[Path]:
    if data_files is None:
        return [sample_path()]
    if isinstance(data_files, str | os.PathLike):
        return [Path(data_files)]
    return [Path(f) for f in data_files]


@functools.lru_cache(maxsize=32)
def _load(
    files: tuple[tuple[str, int], ...], question_field: str | None, answer_field: str | None, max_rows: int | None
) -> tuple[dict[str, Any], ...]:
    """Usable rows of the files, first occurrence of each question only (the mtime in the key re-reads edits)."""
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for name, _mtime in files:
        path = Path(name)
        for row_number, row in enumerate(read_rows(path)):
            if max_rows is not None and len(rows) >= max_rows:
                return tuple(rows)
            question = _field(row, question_field, QUESTION_FALLBACKS)
            gold = normalize_gold(_field(row, answer_field, ANSWER_FALLBACKS))
            if not question or gold is None or str(question).strip() in seen:
                continue
            seen.add(str(question).strip())
            level = row.get("level", row.get("difficulty"))
            extra = {key: row[key] for key in ("answer_form", "unit") if row.get(key)}
            if extra.get("answer_form") not in (None, *FORMS):
                raise ValueError(f"{path}:{row_number}: unknown answer_form {extra['answer_form']!r}")
            rows.append(
                {
                    "question": str(question),
                    "gold": gold,
                    "source": path.name,
                    "row": row_number,
                    "difficulty": level if level in DIFFICULTY else None,
                    **extra,
                }
            )
    if not rows:
        raise ValueError(f"no usable question/answer rows in {[name for name, _ in files]}")
    return tuple(rows)


_LOAD_LOCK = threading.Lock()


@functools.lru_cache(maxsize=64)
def _split_rows(
    files: tuple[tuple[str, int], ...],
    question_field: str | None,
    answer_field: str | None,
    max_rows: int | None,
    split: str,
    eval_fraction: float,
) -> tuple[dict[str, Any], ...]:
    rows = _load(files, question_field, answer_field, max_rows)
    return tuple(row for row in rows if split_of(row["question"], eval_fraction) == split)


def split_rows(*key: Any) -> tuple[dict[str, Any], ...]:
    """One split's rows, parsed once per process: the runner builds envs on many threads at once, and without
    the lock every one of them would parse the same files (512 in flight: 461 parses of a 5,000-row file)."""
    with _LOAD_LOCK:
        return _split_rows(*key)


class MathDatasetTasks(TaskSource):
    """Problems from files (the bundled 20-problem sample by default), split by question hash."""

    family = "math"

    def __init__(
        self,
        data_files: Files = None,
        *,
        split: str = "train",
        seed: int = 0,
        question_field: str | None = None,
        answer_field: str | None = None,
        max_rows: int | None = None,
    ) -> None:
        super().__init__(split=split, seed=seed)
        files = tuple((str(p.resolve()), p.stat().st_mtime_ns) for p in file_list(data_files))
        self.rows = split_rows(files, question_field, answer_field, max_rows, split, self.eval_fraction)
        if not self.rows:
            raise ValueError(f"no {split} rows in {[name for name, _ in files]} (rows are split by question hash)")

    def __len__(self) -> int:
        return len(self.rows)

    def task(self, index: int) -> Task:
        row = self.rows[index]
        meta = {key: row[key] for key in ("source", "row", "answer_form", "unit") if row.get(key) is not None}
        return self.make_task(
            index,
            prompt=prompt_for(row["question"]),
            ground_truth=row["gold"],
            reference_actions=[reference_action(row["gold"])],
            difficulty=row["difficulty"],
            question=row["question"],
            **meta,
        )
