"""Puzzle families, per-index deterministic generation, and rebuilding a puzzle from a task's ground truth.

Item `index` of family F with seed s is generated from `random.Random(f"{F}:{s}:{index}")` (string seeds hash
deterministically) and checked by the family's solver; the solver's solution is the reference. The ground truth
holds the puzzle spec and that solution, so any task can be re-scored from its JSON alone.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pydantic import BaseModel

from rlvr_gym import Task

from .base import Puzzle
from .flowfree import LETTERS, FlowFreePuzzle
from .flowfree_gen import FLOWFREE_PRESETS, FlowFreeConfig, generate_flowfree, solve_flowfree
from .maze import MAZE_PRESETS, MazeConfig, MazePuzzle, generate_maze
from .sokoban import SokobanPuzzle
from .sokoban_gen import SOKOBAN_PRESETS, SokobanConfig, count_pushes, generate_sokoban

DIFFICULTIES = ("easy", "medium", "hard")


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


def _paths_text(puzzle: Puzzle, moves: list) -> str:
    n = puzzle.cols
    return "\n".join(f"{LETTERS[k]}: " + " ".join(f"({c // n},{c % n})" for c in path) for k, path in moves)


@dataclass(frozen=True)
class Family:
    name: str
    puzzle_cls: type[Puzzle]
    config_cls: type[BaseModel]
    presets: dict[str, dict]
    generate: Callable[[Any, random.Random], tuple[Puzzle, list]]
    answer_text: Callable[[Puzzle, list], str]
    optimal: Callable[[Puzzle, list], int]
    title: str


FAMILIES: dict[str, Family] = {
    "sokoban": Family("sokoban", SokobanPuzzle, SokobanConfig, SOKOBAN_PRESETS, generate_sokoban,
                      _direction_text, lambda p, m: count_pushes(p, m), "Sokoban"),  # type: ignore[arg-type]
    "maze": Family("maze", MazePuzzle, MazeConfig, MAZE_PRESETS, generate_maze, _direction_text,
                   lambda p, m: len(m), "Maze"),
    "flowfree": Family("flowfree", FlowFreePuzzle, FlowFreeConfig, FLOWFREE_PRESETS, _solved_flowfree,
                       _paths_text, lambda p, m: sum(len(path) - 1 for _, path in m), "FlowFree"),
}


def make_config(family: str, difficulty: str = "medium", overrides: dict[str, Any] | None = None) -> BaseModel:
    """The family's config: a difficulty preset with explicit knob overrides on top."""
    spec = FAMILIES[family]
    if difficulty not in spec.presets:
        raise ValueError(f"difficulty must be one of {sorted(spec.presets)}, got {difficulty!r}")
    return spec.config_cls(**{**spec.presets[difficulty], **(overrides or {})})


@dataclass(frozen=True)
class Instance:
    puzzle: Puzzle
    moves: list
    optimal: int


def _jsonable_moves(moves: list) -> list:
    return [[k, list(path)] for k, path in moves] if moves and isinstance(moves[0], tuple) else list(moves)


def moves_from_json(family: str, moves: list) -> list:
    return [(int(k), tuple(path)) for k, path in moves] if family == "flowfree" else list(moves)


@lru_cache(maxsize=1024)
def _generate_cached(family: str, config_json: str, seed: int, index: int) -> tuple[str, str, int]:
    spec = FAMILIES[family]
    config = spec.config_cls.model_validate_json(config_json)
    puzzle, moves = spec.generate(config, random.Random(f"{family}:{seed}:{index}"))
    return json.dumps(puzzle.to_spec()), json.dumps(_jsonable_moves(moves)), spec.optimal(puzzle, moves)


def generate_instance(family: str, config: BaseModel, seed: int, index: int) -> Instance:
    spec_json, moves_json, optimal = _generate_cached(family, config.model_dump_json(), seed, index)
    puzzle = FAMILIES[family].puzzle_cls.from_spec(json.loads(spec_json))
    return Instance(puzzle, moves_from_json(family, json.loads(moves_json)), optimal)


def ground_truth(family: str, instance: Instance) -> dict[str, Any]:
    return {
        "family": family,
        "spec": instance.puzzle.to_spec(),
        "solution": _jsonable_moves(instance.moves),
        "optimal_steps": instance.optimal,
        "step_unit": instance.puzzle.step_unit,
    }


def puzzle_from_task(task: Task) -> Puzzle:
    truth = task.ground_truth
    return FAMILIES[truth["family"]].puzzle_cls.from_spec(truth["spec"])


def task_solution(task: Task) -> list:
    return moves_from_json(task.ground_truth["family"], task.ground_truth["solution"])
