"""Maze: grid mazes carved by a randomised depth-first search, optionally braided into several routes.

The board is a tile grid (`#` wall, `.` open, `S` start, `G` goal, `@` you); a move goes one tile. A perfect maze
(no extra openings) has exactly one simple path from S to G; `extra_openings` knocks out walls between cells to
create loops and so several routes. The solver is breadth-first search (shortest path in moves).
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Hashable, Iterable
from typing import Any, ClassVar

import numpy as np
from pydantic import BaseModel, Field

from .base import DIRECTIONS, Puzzle, parse_directions

FLOOR, WALL, START, GOAL, PLAYER, PLAYER_ON_GOAL = range(6)
_CLASS_SYMBOL = {FLOOR: ".", WALL: "#", START: "S", GOAL: "G", PLAYER: "@", PLAYER_ON_GOAL: "@"}


class MazeConfig(BaseModel):
    """Difficulty knobs: maze size in cells (the tile board is 2n+1 wide) and extra openings (loops)."""

    width: int = Field(6, ge=2, le=40)
    height: int = Field(6, ge=2, le=40)
    paths: str = Field("unique", pattern="^(unique|multiple)$")
    extra_openings: int = Field(3, ge=0, description="walls removed when paths='multiple'")


MAZE_PRESETS: dict[int, dict] = {  # the shared difficulty scale 1..5 (2, 3, 4 were easy, medium, hard)
    1: {"width": 5, "height": 5},  # smaller boards repeat: 4x4 mazes gave 84 repeats in 200 draws
    2: {"width": 6, "height": 6},
    3: {"width": 6, "height": 6, "paths": "multiple", "extra_openings": 3},
    4: {"width": 10, "height": 10, "paths": "multiple", "extra_openings": 6},
    5: {"width": 14, "height": 14, "paths": "multiple", "extra_openings": 10},
}


class MazePuzzle(Puzzle):
    family: ClassVar[str] = "maze"
    class_names: ClassVar[tuple[str, ...]] = ("floor", "wall", "start", "goal", "player", "player_on_goal")
    palette: ClassVar[np.ndarray] = np.array(
        [(235, 235, 235), (40, 40, 40), (120, 200, 255), (50, 190, 70), (220, 40, 40), (240, 200, 0)],
        dtype=np.uint8,
    )

    def __init__(self, rows: int, cols: int, walls: Iterable[int], start: int, goal: int) -> None:
        self.rows, self.cols = rows, cols
        self.walls = frozenset(walls)
        self.start, self.goal = start, goal
        self.deltas = {name: dr * cols + dc for name, (dr, dc) in DIRECTIONS.items()}
        self.goal_distance = self.distances(goal)
        if start not in self.goal_distance:
            raise ValueError("the goal is not reachable from the start")

    # ---- spec ----------------------------------------------------------------------------------------------------
    @classmethod
    def from_spec(cls, spec: dict[str, Any]) -> MazePuzzle:
        lines = list(spec["board"])
        rows, cols = len(lines), len(lines[0])
        walls, start, goal = [], -1, -1
        for r, line in enumerate(lines):
            for c, ch in enumerate(line):
                i = r * cols + c
                if ch == "#":
                    walls.append(i)
                elif ch in "S@":
                    start = i
                elif ch == "G":
                    goal = i
        return cls(rows, cols, walls, start, goal)

    def to_spec(self) -> dict[str, Any]:
        grid = self._static()
        return {"board": ["".join(_CLASS_SYMBOL[int(v)] for v in row) for row in grid]}

    # ---- rules ---------------------------------------------------------------------------------------------------
    def neighbours(self, cell: int, blocked: frozenset[int] = frozenset()) -> Iterable[int]:
        r, c = divmod(cell, self.cols)
        for dr, dc in DIRECTIONS.values():
            nr, nc = r + dr, c + dc
            nxt = nr * self.cols + nc
            if 0 <= nr < self.rows and 0 <= nc < self.cols and nxt not in self.walls and nxt not in blocked:
                yield nxt

    def distances(self, source: int, limit: int | None = None, blocked: frozenset[int] = frozenset()) -> dict[int, int]:
        """BFS distances from `source` (only up to `limit` moves when given, avoiding `blocked` tiles)."""
        dist = {source: 0}
        queue = deque([source])
        while queue:
            cell = queue.popleft()
            if limit is not None and dist[cell] >= limit:
                continue
            for nxt in self.neighbours(cell, blocked):
                if nxt not in dist:
                    dist[nxt] = dist[cell] + 1
                    queue.append(nxt)
        return dist

    def initial_state(self) -> Hashable:
        return self.start

    def parse_action(self, text: str) -> tuple[list[Any], str | None]:
        """U/D/L/R only: the Maze prompt offers no `restart`, so the word is refused like any unknown one."""
        return parse_directions(text)

    def apply(self, state: Hashable, move: Any) -> tuple[Hashable | None, str | None]:
        if move not in DIRECTIONS:
            return None, f"{move!r} is not a move of this maze"
        r, c = divmod(int(state), self.cols)  # type: ignore[call-overload]
        dr, dc = DIRECTIONS[move]
        nr, nc = r + dr, c + dc
        if not (0 <= nr < self.rows and 0 <= nc < self.cols) or nr * self.cols + nc in self.walls:
            return None, "walks into a wall"
        return nr * self.cols + nc, None

    def is_solved(self, state: Hashable) -> bool:
        return state == self.goal

    def progress_parts(self, state: Hashable) -> dict[str, float]:
        total = self.goal_distance[self.start]
        return {"distance_to_exit": 1.0 - self.goal_distance.get(int(state), total) / total}  # type: ignore[call-overload]

    def successors(self, state: Hashable) -> Iterable[Hashable]:
        return self.neighbours(int(state))  # type: ignore[call-overload]

    def frame_transition_error(self, prev: Hashable, nxt: Hashable, max_moves: int) -> str | None:
        if int(nxt) in self.distances(int(prev), max_moves):  # type: ignore[call-overload]
            return None
        distance = self.distances(int(prev)).get(int(nxt))  # type: ignore[call-overload]
        if distance is None:
            return "the player jumped through walls (teleport)"
        return f"the player jumped {distance} moves at once (teleport; at most {max_moves} allowed)"

    def trajectory_metrics(self, states: list[Hashable]) -> dict[str, float]:
        """F1 between the tiles visited and the tiles of the BFS reference shortest path (VideoRLVR's maze metric)."""
        reference = {self.start}
        cell = self.start
        for move in self.shortest_path():
            cell = self.apply(cell, move)[0]  # type: ignore[assignment]
            reference.add(cell)
        visited = {int(s) for s in states}  # type: ignore[call-overload]
        overlap = len(visited & reference)
        return {"path_f1": 2 * overlap / (len(visited) + len(reference))}

    def shortest_path(self) -> list[str]:
        """BFS shortest solution as moves."""
        names = {delta: name for name, delta in self.deltas.items()}
        cell, moves = self.start, []
        while cell != self.goal:
            nxt = min(self.neighbours(cell), key=lambda n: self.goal_distance.get(n, 1 << 30))
            moves.append(names[nxt - cell])
            cell = nxt
        return moves

    # ---- views ---------------------------------------------------------------------------------------------------
    def _static(self) -> np.ndarray:
        grid = np.full(self.rows * self.cols, FLOOR, dtype=np.int64)
        grid[list(self.walls)] = WALL
        grid[self.start] = START
        grid[self.goal] = GOAL
        return grid.reshape(self.rows, self.cols)

    def cells(self, state: Hashable) -> np.ndarray:
        grid = self._static().reshape(-1)
        grid[int(state)] = PLAYER_ON_GOAL if state == self.goal else PLAYER  # type: ignore[call-overload]
        return grid.reshape(self.rows, self.cols)

    def text(self, state: Hashable) -> str:
        return "\n".join("".join(_CLASS_SYMBOL[int(v)] for v in row) for row in self.cells(state))

    def legend(self) -> str:
        return (
            "Symbols: # wall, . open, S start, G goal (exit), @ you. Moves: U (up), D (down), L (left), "
            "R (right), one tile each; walls block. Reach G."
        )

    def frame_state(self, cells: np.ndarray) -> tuple[Hashable | None, str | None]:
        flat = cells.reshape(-1)
        players = np.flatnonzero(np.isin(flat, (PLAYER, PLAYER_ON_GOAL)))
        if len(players) != 1:
            return None, f"{len(players)} players on the board (need exactly 1)"
        player = int(players[0])
        expected = self.cells(player).reshape(-1)
        if not np.array_equal(flat, expected):
            bad = int(np.flatnonzero(flat != expected)[0])
            return None, f"cell ({bad // self.cols},{bad % self.cols}) does not match the maze's walls/start/goal"
        return player, None


def generate_maze(config: MazeConfig, rng: random.Random) -> tuple[MazePuzzle, list[str]]:
    """Carve by randomised DFS; S at the top-left cell, G at the cell farthest from it."""
    h, w = config.height, config.width
    rows, cols = 2 * h + 1, 2 * w + 1
    open_tiles = set()
    seen = {(0, 0)}
    stack = [(0, 0)]
    open_tiles.add(cols + 1)
    while stack:
        r, c = stack[-1]
        options = [
            (r + dr, c + dc)
            for dr, dc in DIRECTIONS.values()
            if 0 <= r + dr < h and 0 <= c + dc < w and (r + dr, c + dc) not in seen
        ]
        if not options:
            stack.pop()
            continue
        nr, nc = rng.choice(options)
        seen.add((nr, nc))
        open_tiles.add((2 * nr + 1) * cols + 2 * nc + 1)
        open_tiles.add((r + nr + 1) * cols + (c + nc + 1))  # the wall tile between the two cells
        stack.append((nr, nc))
    start = cols + 1
    probe = MazePuzzle(rows, cols, set(range(rows * cols)) - open_tiles, start, start)
    far = probe.distances(start)
    goal = max((d, cell) for cell, d in far.items() if (cell // cols) % 2 == 1 and (cell % cols) % 2 == 1)[1]
    if config.paths == "multiple":
        closed = [
            (r + 1) * cols + c + 1
            for r in range(2 * h - 1)
            for c in range(2 * w - 1)
            if (r + c) % 2 == 1 and (r + 1) * cols + c + 1 not in open_tiles
        ]
        rng.shuffle(closed)
        opened = max(1, config.extra_openings)
        open_tiles.update(closed[:opened])
        for extra in closed[opened:]:  # keep opening until S and G really are joined by two routes
            if has_multiple_paths(MazePuzzle(rows, cols, set(range(rows * cols)) - open_tiles, start, goal)):
                break
            open_tiles.add(extra)
    puzzle = MazePuzzle(rows, cols, set(range(rows * cols)) - open_tiles, start, goal)
    return puzzle, puzzle.shortest_path()


def has_multiple_paths(puzzle: MazePuzzle) -> bool:
    """True when some tile of a shortest S-G path can be blocked and G is still reachable."""
    cell, path = puzzle.start, []
    for move in puzzle.shortest_path()[:-1]:
        cell = puzzle.apply(cell, move)[0]  # type: ignore[assignment]
        path.append(cell)
    return any(puzzle.goal in puzzle.distances(puzzle.start, blocked=frozenset({cell})) for cell in path)
