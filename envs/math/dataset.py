"""Math tasks from JSONL or parquet files with question/answer fields (GSM8K and MATH conventions).

Gold answers are normalised on load: GSM8K's `... #### 1,234` becomes `1234`, a MATH solution's last
`\\boxed{...}` becomes its content, anything else is kept as written (minus `$` wrappers and a final period).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from rlvr_gym import Task

from .extract import boxed_spans
from .generator import prompt_for, reference_action

SAMPLE_FILE = "gsm8k_style_sample.jsonl"
QUESTION_FALLBACKS = ("question", "problem", "prompt")
ANSWER_FALLBACKS = ("answer", "solution", "final_answer")


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
        text = text.replace(",", "") if text.replace(",", "").lstrip("-").replace(".", "", 1).isdigit() else text
    elif "\\boxed" in text or "\\fbox" in text:
        spans = [span for span in boxed_spans(text, max_chars=10_000) if span]
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
    if suffixes.endswith(".parquet") or suffixes.endswith(".pq"):
        return _rows_parquet(path)
    if suffixes.endswith(".jsonl") or suffixes.endswith(".json"):
        return _rows_jsonl(path)
    raise ValueError(f"{path}: unsupported file type (use .jsonl or .parquet)")


def _field(row: dict[str, Any], name: str | None, fallbacks: Sequence[str]) -> Any:
    if name is not None:
        return row.get(name)
    return next((row[key] for key in fallbacks if row.get(key) not in (None, "")), None)


def load_tasks(
    data_files: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None,
    *,
    question_field: str | None = None,
    answer_field: str | None = None,
    max_rows: int | None = None,
) -> list[Task]:
    """All usable rows of the files as tasks (rows without question or answer are skipped; none at all is an error).

    Fields default to the first present of `question`/`problem`/`prompt` and `answer`/`solution`/`final_answer`.
    """
    if data_files is None:
        files = [sample_path()]
    elif isinstance(data_files, str | os.PathLike):
        files = [Path(data_files)]
    else:
        files = [Path(f) for f in data_files]
    tasks: list[Task] = []
    for path in files:
        for row_number, row in enumerate(read_rows(path)):
            if max_rows is not None and len(tasks) >= max_rows:
                return tasks
            question = _field(row, question_field, QUESTION_FALLBACKS)
            gold = normalize_gold(_field(row, answer_field, ANSWER_FALLBACKS))
            if not question or gold is None:
                continue
            index = len(tasks)
            metadata = {
                "source": path.name,
                "index": index,
                "row": row_number,
                "seed": None,
                "difficulty": row.get("level", row.get("difficulty")),
                "family": "dataset",
                "question": str(question),
            }
            tasks.append(
                Task(
                    id=f"mathds/{path.stem}/{row_number}",
                    prompt=prompt_for(str(question)),
                    ground_truth=gold,
                    reference_actions=[reference_action(gold)],
                    metadata=metadata,
                )
            )
    if not tasks:
        raise ValueError(f"no usable question/answer rows in {[str(f) for f in files]}")
    return tasks
