"""Sokoban: rules, text board and frame states.

Board symbols (XSB with `_` for floor so whitespace never matters): `#` wall, `_` floor, `.` goal, `$` box,
`*` box on goal, `@` player, `+` player on goal. A state is (player, frozenset(boxes)) over flat cell indices.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any, ClassVar

import numpy as np

from .base import DIRECTIONS, RESTART, Puzzle, parse_directions

State = tuple[int, frozenset[int]]

FLOOR, WALL, GOAL, BOX, BOX_ON_GOAL, PLAYER, PLAYER_ON_GOAL = range(7)
_SYMBOL_CLASS = {
    "_": FLOOR,
    " ": FLOOR,
    "-": FLOOR,
    "#": WALL,
    ".": GOAL,
    "$": BOX,
    "*": BOX_ON_GOAL,
    "@": PLAYER,
    "+": PLAYER_ON_GOAL,
}
_CLASS_SYMBOL = {FLOOR: "_", WALL: "#", GOAL: ".", BOX: "$", BOX_ON_GOAL: "*", PLAYER: "@", PLAYER_ON_GOAL: "+"}


class SokobanPuzzle(Puzzle):
    family: ClassVar[str] = "sokoban"
    class_names: ClassVar[tuple[str, ...]] = (
        "floor",
        "wall",
        "goal",
        "box",
        "box_on_goal",
        "player",
        "player_on_goal",
    )
    palette: ClassVar[np.ndarray] = np.array(
        [(222, 222, 222), (72, 52, 40), (242, 150, 150), (205, 130, 20), (40, 175, 60), (35, 80, 225), (150, 40, 200)],
        dtype=np.uint8,
    )
    step_unit: ClassVar[str] = "pushes"

    def __init__(
        self, rows: int, cols: int, walls: Iterable[int], goals: Iterable[int], boxes: Iterable[int], player: int
    ) -> None:
        self.rows, self.cols = rows, cols
        self.walls = frozenset(walls)
        self.goals = frozenset(goals)
        self.boxes = frozenset(boxes)
        self.player = player
        if len(self.goals) != len(self.boxes) or not self.boxes:
            raise ValueError("Sokoban needs as many goals as boxes, and at least one box")
        self.deltas = {name: dr * cols + dc for name, (dr, dc) in DIRECTIONS.items()}

    # ---- spec ----------------------------------------------------------------------------------------------------
    @classmethod
    def from_board(cls, lines: list[str]) -> SokobanPuzzle:
        rows, cols = len(lines), max(len(line) for line in lines)
        walls, goals, boxes, player = set(), set(), set(), -1
        for r, line in enumerate(lines):
            for c, ch in enumerate(line.ljust(cols, "#")):
                i = r * cols + c
                kind = _SYMBOL_CLASS.get(ch)
                if kind is None:
                    raise ValueError(f"unknown Sokoban symbol {ch!r}")
                if kind == WALL:
                    walls.add(i)
                if kind in (GOAL, BOX_ON_GOAL, PLAYER_ON_GOAL):
                    goals.add(i)
                if kind in (BOX, BOX_ON_GOAL):
                    boxes.add(i)
                if kind in (PLAYER, PLAYER_ON_GOAL):
                    player = i
        if player < 0:
            raise ValueError("board has no player")
        return cls(rows, cols, walls, goals, boxes, player)

    @classmethod
    def from_spec(cls, spec: dict[str, Any]) -> SokobanPuzzle:
        return cls.from_board(list(spec["board"]))

    def to_spec(self) -> dict[str, Any]:
        return {"board": self.text(self.initial_state()).splitlines()}

    # ---- rules ---------------------------------------------------------------------------------------------------
    def initial_state(self) -> State:
        return (self.player, self.boxes)

    def is_wall(self, index: int) -> bool:
        return index in self.walls or not 0 <= index < self.rows * self.cols

    def step(self, state: State, move: str) -> tuple[State | None, str | None, bool]:
        """(new state, error, pushed) for one direction."""
        player, boxes = state
        delta = self.deltas[move]
        target = player + delta
        if self.is_wall(target):
            return None, "walks into a wall", False
        if target in boxes:
            beyond = target + delta
            if self.is_wall(beyond):
                return None, "pushes a box into a wall", False
            if beyond in boxes:
                return None, "pushes a box into another box", False
            return (target, (boxes - {target}) | {beyond}), None, True
        return (target, boxes), None, False

    def parse_action(self, text: str) -> tuple[list[Any], str | None]:
        return parse_directions(text, allow_restart=True)

    def apply(self, state: Hashable, move: Any) -> tuple[Hashable | None, str | None]:
        if move == RESTART:
            return self.initial_state(), None
        new, error, _ = self.step(state, move)  # type: ignore[arg-type]
        return new, error

    def move_cost(self, state: Hashable, move: Any) -> int:
        if move == RESTART:
            return 0
        return int(self.step(state, move)[2])  # type: ignore[arg-type]

    def is_solved(self, state: Hashable) -> bool:
        return state[1] == self.goals  # type: ignore[index]

    def progress_parts(self, state: Hashable) -> dict[str, float]:
        boxes = state[1]  # type: ignore[index]
        return {"boxes_on_goals": len(boxes & self.goals) / len(self.goals)}

    def successors(self, state: Hashable) -> Iterable[Hashable]:
        for move in DIRECTIONS:
            new, _, _ = self.step(state, move)  # type: ignore[arg-type]
            if new is not None:
                yield new

    # ---- views ---------------------------------------------------------------------------------------------------
    def cells(self, state: Hashable) -> np.ndarray:
        player, boxes = state  # type: ignore[misc]
        grid = np.full(self.rows * self.cols, FLOOR, dtype=np.int64)
        grid[list(self.walls)] = WALL
        grid[list(self.goals)] = GOAL
        for box in boxes:
            grid[box] = BOX_ON_GOAL if box in self.goals else BOX
        grid[player] = PLAYER_ON_GOAL if player in self.goals else PLAYER
        return grid.reshape(self.rows, self.cols)

    def text(self, state: Hashable) -> str:
        grid = self.cells(state)
        return "\n".join("".join(_CLASS_SYMBOL[int(v)] for v in row) for row in grid)

    def legend(self) -> str:
        return (
            "Symbols: # wall, _ floor, . goal, $ box, * box on a goal, @ you, + you on a goal. "
            "Moves: U (up), D (down), L (left), R (right); walking into a box pushes it one cell if the cell "
            "behind it is free. Boxes cannot be pulled. Push every box onto a goal."
        )

    def frame_state(self, cells: np.ndarray) -> tuple[Hashable | None, str | None]:
        flat = cells.reshape(-1)
        walls = frozenset(np.flatnonzero(flat == WALL).tolist())
        if walls != self.walls:
            return None, "the walls differ from the task's"
        goals = frozenset(np.flatnonzero(np.isin(flat, (GOAL, BOX_ON_GOAL, PLAYER_ON_GOAL))).tolist())
        if goals != self.goals:
            return None, "the goals differ from the task's"
        players = np.flatnonzero(np.isin(flat, (PLAYER, PLAYER_ON_GOAL)))
        if len(players) != 1:
            return None, f"{len(players)} players on the board (need exactly 1)"
        boxes = frozenset(np.flatnonzero(np.isin(flat, (BOX, BOX_ON_GOAL))).tolist())
        if len(boxes) != len(self.boxes):
            return None, f"{len(boxes)} boxes on the board (the task has {len(self.boxes)})"
        return (int(players[0]), boxes), None

    def describe_illegal(self, prev: Hashable, nxt: Hashable, max_moves: int) -> str:
        (_, before), (_, after) = prev, nxt  # type: ignore[misc]
        if len(before - after) > max_moves:
            return f"{len(before - after)} boxes moved at once"
        if before != after:
            return "a box moved without a legal push (through a wall, too far, or not pushed by the player)"
        return "the player moved illegally (teleported, walked through a wall or too far)"
