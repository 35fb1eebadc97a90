"""Non-solving puzzle policies for `rlvr-gym check-env`'s reward floor (the env hook `floor_policies`).

Each is something a policy can do forever without solving: restart, push one direction, step back and forth,
send the prompt's example, draw one-cell stubs at FlowFree's endpoints; for videos: hold the first frame, step
away and back, draw one cell. The reward contract (docs/reward-contract.md) says none of them may earn more than
5% of the oracle's mean; `tests/puzzles/test_puzzles_floor.py` pins it.
"""

from __future__ import annotations

from typing import Any

from rlvr_gym import Task

from .base import DIRECTIONS, Puzzle
from .flowfree import LETTERS, FlowFreePuzzle
from .render import png_data_url, render_grids
from .tasks import puzzle_from_task

_INVERSE = {"U": "D", "D": "U", "L": "R", "R": "L"}


def text_policies(task: Task, turns: int) -> dict[str, list[str]]:
    """Message scripts of `turns` messages each (the env cuts them at its turn limit)."""
    puzzle = puzzle_from_task(task)
    if isinstance(puzzle, FlowFreePuzzle):
        return {name: [message] * turns for name, message in _flowfree_messages(puzzle).items()}
    policies = {"restart_loop": ["restart"] * turns, "example_R_R_D": ["R R D"] * turns}
    for move in DIRECTIONS:
        policies[f"always_{move}"] = [move] * turns
        policies[f"back_and_forth_{move}"] = [f"{move} {_INVERSE[move]}"] * turns
        policies[f"alternate_{move}"] = [move if i % 2 == 0 else _INVERSE[move] for i in range(turns)]
        policies[f"move_then_restart_{move}"] = [move if i % 2 == 0 else "restart" for i in range(turns)]
    return policies


def _flowfree_messages(puzzle: FlowFreePuzzle) -> dict[str, str]:
    n = puzzle.size
    cell = puzzle.name
    stubs, steps = [], []
    for k, (a, _) in enumerate(puzzle.endpoints):
        stubs.append(f"{LETTERS[k]}: {cell(a)}")
        free = [c for c in puzzle.nbrs[a] if c not in puzzle.endpoint_colour]
        steps.append(f"{LETTERS[k]}: {cell(a)} {cell(free[0])}" if free else stubs[-1])
    return {
        "endpoint_stubs": "\n".join(stubs),
        "one_step_stubs": "\n".join(steps),
        "example": "A: (0,0) (0,1) (1,1)",
        "corner_stub": f"A: (0,0) ({n - 1},{n - 1})",
    }


def frame_policies(task: Task, tile: int, fps: float) -> dict[str, list[str]]:
    """One-attempt videos: the first frame held, one move away and back, one cell drawn."""
    puzzle = puzzle_from_task(task)
    start = puzzle.cells(puzzle.initial_state())
    videos: dict[str, list[Any]] = {"hold": [start, start, start]}
    away = _first_legal_move(puzzle)
    if away is not None:
        moved = puzzle.reference_frame_cells(away)
        videos["away_and_back"] = [start, moved[-1], start]
    return {name: [png_data_url(render_grids(puzzle, grids, tile), fps)] for name, grids in videos.items()}


def _first_legal_move(puzzle: Puzzle) -> list[Any] | None:
    """A one-move sequence from the start (Sokoban/Maze: a direction; FlowFree: one cell drawn)."""
    state = puzzle.initial_state()
    if isinstance(puzzle, FlowFreePuzzle):
        for k, (a, _) in enumerate(puzzle.endpoints):
            for c in puzzle.nbrs[a]:
                if c not in puzzle.endpoint_colour:
                    return [(k, (a, c))]
        return None
    return next(([m] for m in DIRECTIONS if puzzle.apply(state, m)[0] is not None), None)
