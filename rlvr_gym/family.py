"""The one family shape: a task source, a verifier and an env, in one folder.

```
envs/<family>/
    __init__.py   register_envs(): one `register(...)` line per env id
    tasks.py      a `TaskSource` subclass: per-index seeded generator and/or loader, splits `train`/`eval`
    verifier.py   verify(task, trajectory) -> Verdict, plus wrong_answers(task, rng) for `rlvr-gym check-env`
    env.py        the Gymnasium env, a few lines on `TaskEnv`/`AnswerEnv`
```

Three concepts only: a task source makes `Task`s, a verifier turns (task, trajectory) into a `Verdict`, an env
plays the task turn by turn. Task ids are `family/split/index` everywhere; difficulty is an int on one shared
scale 1..5 (`DIFFICULTY`). See docs/family-template.md for the walk-through and `rlvr-gym new-env` for a scaffold.
"""

from __future__ import annotations

import hashlib
import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from .types import Task, Verdict

SPLITS = ("train", "eval")
DIFFICULTY = range(1, 6)  # the shared scale: 1 trivial .. 5 hardest the family offers

Trajectory = Sequence[str]
"""The actions of one episode, in order (a single-turn response is a one-element trajectory)."""

Verifier = Callable[[Task, Trajectory], Verdict]
"""The one verifier signature: pure, deterministic, usable without the env (offline re-scoring)."""


def task_id(family: str, split: str, index: int) -> str:
    """The one task-id format: `family/split/index` (e.g. `math/train/17`)."""
    return f"{family}/{split}/{index}"


def parse_task_id(text: str) -> tuple[str, str, int]:
    """Inverse of `task_id`; raises ValueError on anything else (family names may not contain '/')."""
    family, split, index = text.rsplit("/", 2) if text.count("/") >= 2 else ("", "", "")
    if not family or not split or not index.isdigit():
        raise ValueError(f"not a task id of the form family/split/index: {text!r}")
    return family, split, int(index)


def stable_seed(*parts: object, bits: int = 63) -> int:
    """A process-independent integer from parts (Python's `hash` is salted per process, so never use it here)."""
    digest = hashlib.blake2b("|".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % (1 << bits)


def split_of(fingerprint: str, eval_fraction: float = 0.1) -> str:
    """Assign an item to `train` or `eval` by a hash of its content, so the two splits are disjoint by design.

    Generators draw candidates per index and keep only those whose fingerprint falls in their split
    (`TaskSource.draw`): no eval question can ever appear in train, in any process.
    """
    bucket = stable_seed("split", fingerprint) % 10_000
    return "eval" if bucket < eval_fraction * 10_000 else "train"


class TaskSource(ABC):
    """Tasks of one family and split, each a pure function of (config, split, seed, index).

    Subclasses set `family`, implement `task(index)` and, when finite, `__len__`. Generators get their randomness
    from `self.rng(index)` only (reasoning-gym style per-index seeding), so any task can be rebuilt on its own.
    """

    family: ClassVar[str] = ""
    allows_duplicates: ClassVar[bool] = False  # declare when a split may repeat a question (tiny task spaces)
    eval_fraction: ClassVar[float] = 0.1

    def __init__(self, *, split: str = "train", seed: int = 0) -> None:
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
        self.split = split
        self.seed = seed

    def __len__(self) -> int:
        raise TypeError(f"{type(self).__name__} is an unbounded generator")

    @property
    def size(self) -> int | None:
        """Number of tasks in this split, or None for an unbounded generator."""
        try:
            return len(self)
        except TypeError:
            return None

    @abstractmethod
    def task(self, index: int) -> Task:
        """The task at `index` of this split."""

    def rng(self, index: int, attempt: int = 0) -> random.Random:
        return random.Random(stable_seed(self.family, self.split, self.seed, index, attempt))

    def draw(self, index: int, make: Callable[[random.Random], Any], fingerprint: Callable[[Any], str],
             max_attempts: int = 1000) -> Any:
        """Draw the item for `index` from `make(rng)`, retrying until it belongs to this split (see `split_of`)."""
        for attempt in range(max_attempts):
            item = make(self.rng(index, attempt))
            if split_of(fingerprint(item), self.eval_fraction) == self.split:
                return item
        raise RuntimeError(f"{self.family}: no {self.split} item for index {index} in {max_attempts} draws")

    def make_task(self, index: int, *, prompt: Any, ground_truth: Any = None,
                  reference_actions: list[str] | None = None, difficulty: int | None = None,
                  **metadata: Any) -> Task:
        """A `Task` with the standard id and metadata filled in (family, split, index, seed, difficulty)."""
        if difficulty is not None and difficulty not in DIFFICULTY:
            raise ValueError(f"difficulty {difficulty} is outside the shared scale 1..5")
        meta = {"family": self.family, "split": self.split, "index": index, "seed": self.seed, **metadata}
        if difficulty is not None:
            meta["difficulty"] = difficulty
        return Task(id=task_id(self.family, self.split, index), prompt=prompt, ground_truth=ground_truth,
                    reference_actions=reference_actions, metadata=meta)


class ListSource(TaskSource):
    """A finite list of ready tasks (loaders: dataset files, a package's bundled data)."""

    def __init__(self, tasks: Sequence[Task], *, split: str = "train", seed: int = 0) -> None:
        super().__init__(split=split, seed=seed)
        self.tasks = list(tasks)

    def __len__(self) -> int:
        return len(self.tasks)

    def task(self, index: int) -> Task:
        return self.tasks[index]
