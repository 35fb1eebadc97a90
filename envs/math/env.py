"""Math envs: generated problems (`MathEnv`) and problems from files (`MathDatasetEnv`).

Both are `AnswerEnv`s: one attempt by default, or up to `max_attempts` with feedback after a wrong answer and the
reward of attempt k scaled by `attempt_decay ** (k - 1)`. Scoring is `MathVerifier` (components `format`, `correct`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rlvr_gym import AnswerEnv, Task, Verdict

from .dataset import load_tasks
from .extract import MultiplePolicy
from .generator import MathGenerator, MathGeneratorConfig
from .verifier import MathVerifier


class _MathAnswerEnv(AnswerEnv):
    """Shared scoring: the task's gold answer, with the question removed from the output before extraction."""

    family = "math"

    def __init__(
        self,
        *,
        max_attempts: int = 1,
        attempt_decay: float = 0.5,
        format_weight: float = 0.0,
        correct_weight: float = 1.0,
        multiple_answers: MultiplePolicy = "reject",
        max_answer_chars: int = 300,
        verifier_timeout_s: int = 5,
        **kwargs: Any,
    ) -> None:
        super().__init__(max_attempts=max_attempts, attempt_decay=attempt_decay, **kwargs)
        self.verifier = MathVerifier(
            format_weight=format_weight,
            correct_weight=correct_weight,
            multiple_answers=multiple_answers,
            max_answer_chars=max_answer_chars,
            timeout_s=verifier_timeout_s,
        )

    def score_answer(self, task: Task, text: str) -> Verdict:
        echoes = [task.metadata.get("question"), task.prompt if isinstance(task.prompt, str) else None]
        return self.verifier.verdict(text, str(task.ground_truth), question=[e for e in echoes if e])


class MathEnv(_MathAnswerEnv):
    """Procedurally generated problems (arithmetic, fractions, linear, modular, combinatorics), difficulty 1..5."""

    def __init__(
        self,
        *,
        config: MathGeneratorConfig | dict[str, Any] | None = None,
        families: Sequence[str] | dict[str, float] | str | None = None,
        difficulty: int | None = None,
        seed: int | None = None,
        size: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        base = config if isinstance(config, MathGeneratorConfig) else MathGeneratorConfig.model_validate(config or {})
        overrides = {"families": families, "difficulty": difficulty, "seed": seed, "size": size}
        values = {**base.model_dump(), **{k: v for k, v in overrides.items() if v is not None}}
        self.generator = MathGenerator(MathGeneratorConfig.model_validate(values))

    @property
    def num_tasks(self) -> int | None:
        return self.generator.config.size

    def get_task(self, index: int) -> Task:
        return self.generator.task(index)


@functools.lru_cache(maxsize=32)
def _cached_tasks(key: tuple[Any, ...]) -> tuple[Task, ...]:
    files, question_field, answer_field, max_rows = key
    paths = None if files is None else [path for path, _ in files]
    return tuple(load_tasks(paths, question_field=question_field, answer_field=answer_field, max_rows=max_rows))


class MathDatasetEnv(_MathAnswerEnv):
    """Problems from JSONL/parquet files (GSM8K `#### n` or MATH `\\boxed{}` answers); the bundled sample by default."""

    def __init__(
        self,
        *,
        data_files: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None,
        question_field: str | None = None,
        answer_field: str | None = None,
        max_rows: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if data_files is None:
            files = None
        else:
            listed = [data_files] if isinstance(data_files, str | os.PathLike) else list(data_files)
            # the modification time is part of the cache key, so an edited file is read again
            files = tuple((str(Path(f).resolve()), Path(f).stat().st_mtime_ns) for f in listed)
        self.tasks = _cached_tasks((files, question_field, answer_field, max_rows))

    @property
    def num_tasks(self) -> int:
        return len(self.tasks)

    def get_task(self, index: int) -> Task:
        return self.tasks[index].model_copy(deep=True)  # the row cache is shared between env instances
