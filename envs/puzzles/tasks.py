"""Puzzle task sources: per-index deterministic, solver-checked Sokoban, Maze and FlowFree instances.

Task ids are `<puzzle>/<split>/<index>` (`sokoban/train/17`, `maze/eval/3`, `flowfree/train/0`): the id names
the puzzle instance, the same for its text and its frames variant (`metadata["variant"]` says which). Item `index`
is drawn from `TaskSource.rng(index, attempt)` and kept only when the hash of the puzzle's spec falls in the
split (`TaskSource.draw`), so train and eval never share a puzzle. The solver's solution is the reference; the
ground truth holds the spec and that solution, so any task can be re-scored from its JSON alone.

Difficulty is the shared int scale 1..5 (presets in each game module); the old names are still accepted:
easy = 2, medium = 3, hard = 4.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

from pydantic import BaseModel

from rlvr_gym import Task
from rlvr_gym.family import TaskSource

from .base import Puzzle
from .flowfree import LETTERS, FlowFreePuzzle
from .flowfree_gen import FLOWFREE_PRESETS, FlowFreeConfig, generate_flowfree, solve_flowfree
from .maze import MAZE_PRESETS, MazeConfig, MazePuzzle, generate_maze
from .sokoban import SokobanPuzzle
from .sokoban_gen import SOKOBAN_PRESETS, SokobanConfig, count_pushes, generate_sokoban

DIFFICULTY_NAMES = {"easy": 2, "medium": 3, "hard": 4}  # the names the envs took before the shared scale


def _solved_flowfree(config: FlowFreeConfig, rng: random.Random) -> tuple[FlowFreePuzzle, list]:
    """A generated board the solver also solves; the solver's paths become the reference."""
    for _ in range(20):
        try:
            puzzle, _ = generate_flowfree(config, rng)
        except RuntimeError:
            continue
        paths = solve_flowfree(puzzle)
        if paths is not None:
            return puzzle, [(k, tuple(path)) for k, path in enumerate(paths)]
    raise RuntimeError(f"no solver-checked FlowFree board in 20 rounds for {config}")


def _direction_text(_: Puzzle, moves: list) -> str:
    return " ".join(moves)


def paths_text(puzzle: Puzzle, moves: list) -> str:
    """FlowFree paths as the answer format: one `A: (r,c) (r,c) ...` line per colour."""
    n = puzzle.cols
    return "\n".join(f"{LETTERS[k]}: " + " ".join(f"({c // n},{c % n})" for c in path) for k, path in moves)


@dataclass(frozen=True)
class Game:
    """What the task source needs of one puzzle kind."""

    name: str
    puzzle_cls: type[Puzzle]
    config_cls: type[BaseModel]
    presets: dict[int, dict]
    generate: Callable[[Any, random.Random], tuple[Puzzle, list]]
    answer_text: Callable[[Puzzle, list], str]
    optimal: Callable[[Puzzle, list], int]
    title: str


GAMES: dict[str, Game] = {
    "sokoban": Game(
        "sokoban",
        SokobanPuzzle,
        SokobanConfig,
        SOKOBAN_PRESETS,
        generate_sokoban,
        _direction_text,
        lambda p, m: count_pushes(p, m),
        "Sokoban",
    ),  # type: ignore[arg-type]
    "maze": Game(
        "maze", MazePuzzle, MazeConfig, MAZE_PRESETS, generate_maze, _direction_text, lambda p, m: len(m), "Maze"
    ),
    "flowfree": Game(
        "flowfree",
        FlowFreePuzzle,
        FlowFreeConfig,
        FLOWFREE_PRESETS,
        _solved_flowfree,
        paths_text,
        lambda p, m: sum(len(path) - 1 for _, path in m),
        "FlowFree",
    ),
}


def difficulty_level(difficulty: int | str) -> int:
    """The shared 1..5 level of an int or of a legacy name (easy/medium/hard)."""
    if isinstance(difficulty, str) and difficulty in DIFFICULTY_NAMES:
        return DIFFICULTY_NAMES[difficulty]
    if isinstance(difficulty, int) and not isinstance(difficulty, bool) and 1 <= difficulty <= 5:
        return difficulty
    raise ValueError(f"difficulty must be 1..5 or one of {sorted(DIFFICULTY_NAMES)}, got {difficulty!r}")


def make_config(game: str, difficulty: int | str = 3, overrides: dict[str, Any] | None = None) -> BaseModel:
    """The game's config: the difficulty preset with explicit knob overrides on top."""
    spec = GAMES[game]
    return spec.config_cls(**{**spec.presets[difficulty_level(difficulty)], **(overrides or {})})


@dataclass(frozen=True)
class Instance:
    puzzle: Puzzle
    moves: list
    optimal: int


def _jsonable_moves(moves: list) -> list:
    return [[k, list(path)] for k, path in moves] if moves and isinstance(moves[0], tuple) else list(moves)


def moves_from_json(game: str, moves: list) -> list:
    return [(int(k), tuple(path)) for k, path in moves] if game == "flowfree" else list(moves)


class PuzzleTasks(TaskSource):
    """Solver-checked instances of one puzzle kind, one split. The variant only changes prompt and reference.

    Level 1 declares `allows_duplicates` (its board spaces are small enough that ~1% of draws repeat); levels 2..5
    showed no repeat in 200 draws per split. Half of all generated puzzles go to each split (`eval_fraction = 0.5`): a draw then costs two generations on
    average instead of ten for a 10% split, and the puzzle space is far larger than any task set.
    """

    eval_fraction: ClassVar[float] = 0.5

    def __init__(
        self,
        *,
        game: str,
        split: str = "train",
        seed: int = 0,
        difficulty: int | str = 3,
        config: dict[str, Any] | None = None,
        num_tasks: int | None = None,
        prompt: Callable[[Instance], Any] | None = None,
        reference: Callable[[Instance], list[str]] | None = None,
        public: dict[str, Any] | None = None,
    ) -> None:
        if game not in GAMES:
            raise ValueError(f"game must be one of {sorted(GAMES)}, got {game!r}")
        self.family = game  # type: ignore[misc]  # task ids are `<game>/<split>/<index>`
        super().__init__(split=split, seed=seed)
        self.difficulty = difficulty_level(difficulty)
        # level 1 boards come from small spaces: about 1 in 100 draws repeats an earlier board (declared)
        self.allows_duplicates = self.difficulty == 1
        self.config = make_config(self.family, self.difficulty, config)
        self.num_tasks = num_tasks
        self.prompt = prompt or (lambda instance: instance.puzzle.text(instance.puzzle.initial_state()))
        self.reference = reference or (
            lambda instance: [GAMES[self.family].answer_text(instance.puzzle, instance.moves)]
        )
        self.public = dict(public or {})

    def __len__(self) -> int:
        if self.num_tasks is None:
            raise TypeError(f"{type(self).__name__} is an unbounded generator (pass num_tasks=)")
        return self.num_tasks

    def instance(self, index: int) -> Instance:
        spec_json, moves_json, optimal = _generate(
            self.family, self.config.model_dump_json(), self.split, self.seed, index
        )
        puzzle = GAMES[self.family].puzzle_cls.from_spec(json.loads(spec_json))
        return Instance(puzzle, moves_from_json(self.family, json.loads(moves_json)), optimal)

    def task(self, index: int) -> Task:
        instance = self.instance(index)
        puzzle = instance.puzzle
        return self.make_task(
            index,
            prompt=self.prompt(instance),
            ground_truth={
                "game": self.family,
                "spec": puzzle.to_spec(),
                "solution": _jsonable_moves(instance.moves),
                "optimal_steps": instance.optimal,
                "step_unit": puzzle.step_unit,
            },
            reference_actions=self.reference(instance),
            difficulty=self.difficulty,
            config=self.config.model_dump(),
            rows=puzzle.rows,
            cols=puzzle.cols,
            **copy.deepcopy(self.public),
        )


@lru_cache(maxsize=2048)
def _generate(game: str, config_json: str, split: str, seed: int, index: int) -> tuple[str, str, int]:
    """(spec JSON, solution JSON, optimal steps) of one item; cached because solving is the slow part."""
    spec = GAMES[game]
    config = spec.config_cls.model_validate_json(config_json)
    source = PuzzleTasks(game=game, split=split, seed=seed)
    puzzle, moves = source.draw(
        index, lambda rng: spec.generate(config, rng), lambda item: json.dumps(item[0].to_spec(), sort_keys=True)
    )
    return json.dumps(puzzle.to_spec()), json.dumps(_jsonable_moves(moves)), spec.optimal(puzzle, moves)


def puzzle_from_task(task: Task) -> Puzzle:
    truth = task.ground_truth
    return GAMES[truth["game"]].puzzle_cls.from_spec(truth["spec"])


def task_solution(task: Task) -> list:
    return moves_from_json(task.ground_truth["game"], task.ground_truth["solution"])
