"""ALFWorld task sources: generated games (`ALFWorldTasks`) and the official data set (`ALFWorldOfficialTasks`).

A task's prompt is the game's opening observation (room listing and goal); its ground truth is where the game
lives (`gamefile`, plus the generator config to rebuild it on another machine) and the planner's walkthrough, which
is also `reference_actions`. Public metadata carries the task type, scene and difficulty, never the walkthrough
or the game file (which contains it).

Difficulty on the shared 1..5 scale: a task-type base (place or look 1, clean/heat/cool 2, two objects 3) plus 1 for
a walkthrough of 9..14 steps and 2 for a longer one, capped at 5.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from rlvr_gym.family import TaskSource
from rlvr_gym.types import EnvUnavailable, Task

from .generator import GameGenerator, GameRecord, GeneratorConfig, canonical_task_type
from .official import SETS, data_root, official_games, official_record
from .scenes import TASK_TYPES

TYPE_DIFFICULTY = {
    "pick_and_place_simple": 1,
    "look_at_obj_in_light": 1,
    "pick_clean_then_place_in_recep": 2,
    "pick_heat_then_place_in_recep": 2,
    "pick_cool_then_place_in_recep": 2,
    "pick_two_obj_and_place": 3,
}


def difficulty(task_type: str, plan_length: int) -> int:
    bonus = 0 if plan_length <= 8 else 1 if plan_length <= 14 else 2
    return min(5, TYPE_DIFFICULTY.get(task_type, 2) + bonus)


def task_from_record(source: TaskSource, record: GameRecord, **public: Any) -> Task:
    """A Task whose reference actions are the walkthrough (one command per turn)."""
    ground_truth = {
        "gamefile": record.path,
        "walkthrough": list(record.walkthrough),
        "params": dict(record.params),
        "seen_objects": list(record.seen_objects),
    }
    return source.make_task(
        record.index,
        prompt=record.opening.strip() or f"Your task is to: {record.task_desc}.",
        ground_truth=ground_truth,
        reference_actions=list(record.walkthrough),
        difficulty=difficulty(record.task_type, len(record.walkthrough)),
        task_type=record.task_type,
        task_desc=record.task_desc,
        scene=record.scene,
        **public,
    )


class ALFWorldTasks(TaskSource):
    """Generated, planner-verified games (see `generator` for how splits and uniqueness hold by design).

    `scenes`: `seen` (ALFRED train scenes, default) or `unseen` (its test scenes) or `all`; `size` caps the number
    of tasks (the generator can index a few thousand train and several hundred eval games per config).
    """

    family = "alfworld"

    def __init__(
        self,
        *,
        split: str = "train",
        seed: int = 0,
        size: int | None = 1200,
        cache_dir: str | Path | None = None,
        **generator: Any,
    ) -> None:
        super().__init__(split=split, seed=seed)
        self.config = GeneratorConfig(split=split, seed=seed, **generator)  # task_types, scenes, max_instances, ...
        self.generator = GameGenerator(self.config, cache_dir)
        self.limit = size
        self._len: int | None = None

    def __len__(self) -> int:
        if self._len is None:  # listing every goal takes a few seconds: only when asked
            capacity = len(self.generator)
            self._len = capacity if self.limit is None else min(self.limit, capacity)
        return self._len

    def record(self, index: int) -> GameRecord:
        return self.generator.game(index)

    def task(self, index: int) -> Task:
        generator = {k: v for k, v in asdict(self.config).items() if k not in ("split", "seed")}
        return task_from_record(self, self.record(index), scenes=self.config.scenes, generator=generator)


# the older split names of the official env: each means `eval` on that game set
LEGACY_SPLITS = {
    "seen": "valid_seen",
    "unseen": "valid_unseen",
    "valid_seen": "valid_seen",
    "valid_unseen": "valid_unseen",
}


class ALFWorldOfficialTasks(TaskSource):
    """The official ALFWorld games from `$ALFWORLD_DATA` (as set up by `alfworld-download`).

    `train` is the official train set; `eval` is `valid_seen` (default) or `valid_unseen` (`eval_set`). Raises
    `EnvUnavailable` when the data is not there.
    """

    family = "alfworld-official"

    def __init__(
        self,
        *,
        split: str = "eval",
        seed: int = 0,
        eval_set: str = "valid_seen",
        task_types: tuple[str, ...] | list[str] = TASK_TYPES,
    ) -> None:
        if split in LEGACY_SPLITS:
            split, eval_set = "eval", LEGACY_SPLITS[split]
        super().__init__(split=split, seed=seed)
        if eval_set not in SETS[1:]:
            raise ValueError(f"eval_set must be one of {SETS[1:]}, got {eval_set!r}")
        self.game_set = "train" if split == "train" else eval_set
        self.task_types = tuple(canonical_task_type(t) for t in task_types)
        self.games = official_games(self.game_set, self.task_types)
        if not self.games:
            raise EnvUnavailable(
                f"no official ALFWorld games under ALFWORLD_DATA={data_root()} "
                f"(set ALFWORLD_DATA after alfworld-download)"
            )

    def __len__(self) -> int:
        return len(self.games)

    def record(self, index: int) -> GameRecord:
        return official_record(self.games[index], index)

    def task(self, index: int) -> Task:
        return task_from_record(self, self.record(index), game_set=self.game_set)
