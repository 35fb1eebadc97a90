"""Sokoban generation by reverse play from the solved state, and a push-optimal solver with deadlock pruning.

Generation: carve a connected room by a random walk, put every box on a goal, then let the player walk
backwards, pulling boxes, so the start position is solvable by construction. The solver (breadth-first over
pushes, player position normalised to its reachable region) then proves it and supplies the reference solution;
it prunes dead squares (cells from which no goal can be reached by pushing) and 2x2 freeze deadlocks.
"""

from __future__ import annotations

import random
from collections import deque

from pydantic import BaseModel, Field, model_validator

from .base import DIRECTIONS
from .sokoban import SokobanPuzzle


class SokobanConfig(BaseModel):
    """Difficulty knobs: room size (interior), box count, how long the reverse play scrambles."""

    width: int = Field(6, ge=3, le=14)
    height: int = Field(6, ge=3, le=14)
    num_boxes: int = Field(2, ge=1, le=6)
    floor_fraction: float = Field(0.65, gt=0.2, le=1.0)
    reverse_steps: int = Field(60, ge=5, le=2000)
    min_pushes: int = Field(2, ge=1)
    max_attempts: int = Field(60, ge=1)
    solver_max_states: int = Field(60_000, ge=100)

    @model_validator(mode="after")
    def _room_fits(self) -> SokobanConfig:
        if self.num_boxes + 2 > self.width * self.height * self.floor_fraction:
            raise ValueError("room too small for this many boxes")
        return self


SOKOBAN_PRESETS: dict[int, dict] = {  # the shared difficulty scale 1..5 (2, 3, 4 were easy, medium, hard)
    1: {"width": 5, "height": 5, "num_boxes": 1, "reverse_steps": 40, "min_pushes": 2},
    2: {"width": 5, "height": 5, "num_boxes": 1, "reverse_steps": 60, "min_pushes": 3},
    3: {"width": 6, "height": 6, "num_boxes": 2, "reverse_steps": 120, "min_pushes": 5},
    4: {"width": 7, "height": 7, "num_boxes": 3, "reverse_steps": 200, "min_pushes": 8},
    5: {"width": 8, "height": 7, "num_boxes": 4, "reverse_steps": 250, "min_pushes": 10},  # ~1.4 s each
}


# ---- solver ------------------------------------------------------------------------------------------------------
def _reach(puzzle: SokobanPuzzle, player: int, boxes: frozenset[int]) -> dict[int, int]:
    """Cells the player can walk to without pushing, with the BFS parent of each (for path reconstruction)."""
    parents = {player: -1}
    queue = deque([player])
    deltas = puzzle.deltas.values()
    while queue:
        cell = queue.popleft()
        for delta in deltas:
            nxt = cell + delta
            if nxt not in parents and not puzzle.is_wall(nxt) and nxt not in boxes:
                parents[nxt] = cell
                queue.append(nxt)
    return parents


def live_cells(puzzle: SokobanPuzzle) -> frozenset[int]:
    """Cells from which a lone box can still be pushed to some goal (all other cells are dead squares)."""
    live = set(puzzle.goals)
    queue = deque(puzzle.goals)
    while queue:
        cell = queue.popleft()
        for delta in puzzle.deltas.values():
            before, player = cell - delta, cell - 2 * delta  # a push from `before` toward `cell` needs `player` free
            if before not in live and not puzzle.is_wall(before) and not puzzle.is_wall(player):
                live.add(before)
                queue.append(before)
    return frozenset(live)


def _frozen(puzzle: SokobanPuzzle, boxes: frozenset[int], cell: int) -> bool:
    """A 2x2 block of walls/boxes containing `cell` with a box off its goal can never be broken up."""
    cols = puzzle.cols
    for corner in (cell, cell - 1, cell - cols, cell - cols - 1):
        block = (corner, corner + 1, corner + cols, corner + cols + 1)
        if all(puzzle.is_wall(c) or c in boxes for c in block):
            if any(c in boxes and c not in puzzle.goals for c in block):
                return True
    return False


def _walk(puzzle: SokobanPuzzle, start: int, goal: int, boxes: frozenset[int]) -> list[str]:
    parents = _reach(puzzle, start, boxes)
    names = {delta: name for name, delta in puzzle.deltas.items()}
    path: list[str] = []
    cell = goal
    while cell != start:
        prev = parents[cell]
        path.append(names[cell - prev])
        cell = prev
    return path[::-1]


def solve_sokoban(puzzle: SokobanPuzzle, max_states: int = 200_000) -> list[str] | None:
    """A push-optimal solution as moves (U/D/L/R), or None when unsolvable within `max_states` expansions."""
    live = live_cells(puzzle)
    if not puzzle.boxes <= live:
        return None
    start = (puzzle.boxes, puzzle.player, None, None)
    queue = deque([start])
    parents: dict[tuple[frozenset[int], int], tuple] = {}
    while queue and len(parents) < max_states:
        boxes, player, parent_key, push = queue.popleft()
        reach = _reach(puzzle, player, boxes)
        key = (boxes, min(reach))
        if key in parents:
            continue
        parents[key] = (parent_key, push)
        if boxes == puzzle.goals:
            return _moves_from(puzzle, parents, key)
        for box in boxes:
            for name, delta in puzzle.deltas.items():
                target = box + delta
                if box - delta not in reach or target not in live or target in boxes or puzzle.is_wall(target):
                    continue
                moved = (boxes - {box}) | {target}
                if _frozen(puzzle, moved, target):
                    continue
                queue.append((moved, box, key, (box - delta, name)))
    return None


def _moves_from(puzzle: SokobanPuzzle, parents: dict, key: tuple) -> list[str]:
    pushes = []
    while parents[key][0] is not None:
        parent_key, push = parents[key]
        pushes.append(push)
        key = parent_key
    moves: list[str] = []
    player, boxes = puzzle.player, puzzle.boxes
    for stand, name in reversed(pushes):
        moves += _walk(puzzle, player, stand, boxes)
        state, error, _ = puzzle.step((stand, boxes), name)
        assert state is not None, error
        player, boxes = state
        moves.append(name)
    return moves


# ---- generator ---------------------------------------------------------------------------------------------------
def _carve_room(config: SokobanConfig, rng: random.Random) -> tuple[int, int, set[int]]:
    rows, cols = config.height + 2, config.width + 2
    target = max(config.num_boxes + 2, round(config.floor_fraction * config.width * config.height))
    r, c = rng.randrange(1, rows - 1), rng.randrange(1, cols - 1)
    floor = {r * cols + c}
    direction = rng.choice(list(DIRECTIONS.values()))
    while len(floor) < target:
        if rng.random() < 0.35:
            direction = rng.choice(list(DIRECTIONS.values()))
        nr, nc = r + direction[0], c + direction[1]
        if 1 <= nr < rows - 1 and 1 <= nc < cols - 1:
            r, c = nr, nc
            floor.add(r * cols + c)
    return rows, cols, floor


def _reverse_play(puzzle: SokobanPuzzle, steps: int, rng: random.Random) -> tuple[int, frozenset[int], int]:
    """Walk backwards from the solved state, pulling boxes; returns the scrambled (player, boxes, pulls)."""
    player, boxes, pulls = puzzle.player, set(puzzle.goals), 0
    for _ in range(steps):
        name = rng.choice("UDLR")
        delta = puzzle.deltas[name]
        nxt = player + delta
        if puzzle.is_wall(nxt) or nxt in boxes:
            continue
        behind = player - delta
        if behind in boxes and rng.random() < 0.75:
            boxes.remove(behind)
            boxes.add(player)
            pulls += 1
        player = nxt
    return player, frozenset(boxes), pulls


def generate_sokoban(config: SokobanConfig, rng: random.Random) -> tuple[SokobanPuzzle, list[str]]:
    """A solvable room and its push-optimal solution (needs at least `min_pushes` pushes)."""
    for _ in range(config.max_attempts):
        rows, cols, floor = _carve_room(config, rng)
        walls = set(range(rows * cols)) - floor
        cells = sorted(floor)
        goals = rng.sample(cells, config.num_boxes)
        player = rng.choice([c for c in cells if c not in goals])
        solved = SokobanPuzzle(rows, cols, walls, goals, goals, player)
        best = None
        for _ in range(4):
            start_player, boxes, pulls = _reverse_play(solved, config.reverse_steps, rng)
            score = (len(boxes - solved.goals), pulls)
            if score[0] and (best is None or score > best[0]):
                best = (score, start_player, boxes)
        if best is None:
            continue
        puzzle = SokobanPuzzle(rows, cols, walls, goals, best[2], best[1])
        solution = solve_sokoban(puzzle, config.solver_max_states)
        if solution is None:
            continue
        if count_pushes(puzzle, solution) >= config.min_pushes:
            return puzzle, solution
    raise RuntimeError(f"no Sokoban room found in {config.max_attempts} attempts for {config}")


def _states_with_moves(puzzle: SokobanPuzzle, moves: list[str]):
    state = puzzle.initial_state()
    for move in moves:
        yield state, move
        state = puzzle.apply(state, move)[0]


def count_pushes(puzzle: SokobanPuzzle, moves: list[str]) -> int:
    return sum(puzzle.move_cost(s, m) for s, m in _states_with_moves(puzzle, moves))


__all__ = ["SOKOBAN_PRESETS", "SokobanConfig", "count_pushes", "generate_sokoban", "live_cells", "solve_sokoban"]
