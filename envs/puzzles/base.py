"""The puzzle-family contract shared by the text envs, the renderer and the frame verifier.

A `Puzzle` is one generated instance (board, endpoints, ...) rebuilt from a JSON-able `spec`. It knows its rules
twice over: as moves on a hashable state (the text path) and as legality of the change between two decoded cell
grids (the video path). Sokoban and Maze reuse the move rules for frames (breadth-first search over at most `k`
moves); FlowFree overrides the frame rules because a frame only shows cell colours, not the drawing order.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Hashable, Iterable
from typing import Any, ClassVar

import numpy as np

DIRECTIONS: dict[str, tuple[int, int]] = {"U": (-1, 0), "D": (1, 0), "L": (0, -1), "R": (0, 1)}
RESTART = "RESTART"
MAX_MOVES_PER_ACTION = 10_000  # a longer reply is refused, so no single message can stall the env
_WORDS = {
    "up": "U", "down": "D", "left": "L", "right": "R", "north": "U", "south": "D", "west": "L", "east": "R",
    "restart": RESTART, "reset": RESTART,
}
_ARROWS = {"↑": " U ", "↓": " D ", "←": " L ", "→": " R "}
_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.IGNORECASE | re.DOTALL)
_MOVES_LINE = re.compile(r"^\s*(?:moves?|answer)\s*:(.*)$", re.IGNORECASE | re.MULTILINE)


def answer_region(text: str) -> str:
    """The part of a reply that holds the answer: the last <answer> block, else the last `moves:` line, else all."""
    tagged = _ANSWER_TAG.findall(text)
    if tagged:
        return tagged[-1]
    lines = _MOVES_LINE.findall(text)
    if lines:
        return lines[-1]
    return text


def parse_directions(text: str) -> tuple[list[str], str | None]:
    """Moves U/D/L/R from "UDLR", "up, left", "R R D", arrows; `restart` goes back to the start.

    Returns (moves, error); on an unreadable token the error names it and the moves are empty.
    """
    region = answer_region(text)
    for arrow, letter in _ARROWS.items():
        region = region.replace(arrow, letter)
    moves: list[str] = []
    for token in re.findall(r"[A-Za-z]+|[^\sA-Za-z,;.\-`*>\[\](){}'\"|/]+", region):
        word = token.lower()
        if word in _WORDS:
            moves.append(_WORDS[word])
        elif token.isalpha() and set(word) <= set("udlr"):
            moves.extend(ch.upper() for ch in word)
        else:
            return [], f"could not read {token[:20]!r} as a move (use U, D, L, R, up/down/left/right or restart)"
        if len(moves) > MAX_MOVES_PER_ACTION:
            return [], f"more than {MAX_MOVES_PER_ACTION} moves in one message"
    if not moves:
        return [], "no moves found (use U, D, L, R, e.g. 'R R D' or 'RRD')"
    return moves, None


class Puzzle(ABC):
    """One puzzle instance. States are hashable; `cells` maps a state to palette indices for rendering."""

    family: ClassVar[str]
    class_names: ClassVar[tuple[str, ...]]
    palette: ClassVar[np.ndarray]
    step_unit: ClassVar[str] = "moves"
    #: palette index drawn in the inset border of cells whose `full_mask` is False (FlowFree path cells)
    background_class: ClassVar[int] = 0

    rows: int
    cols: int

    # ---- spec ----------------------------------------------------------------------------------------------------
    @classmethod
    @abstractmethod
    def from_spec(cls, spec: dict[str, Any]) -> Puzzle:
        """Rebuild from the JSON-able spec stored in the task's ground truth."""

    @abstractmethod
    def to_spec(self) -> dict[str, Any]:
        """JSON-able description enough to rebuild the puzzle."""

    # ---- text path -----------------------------------------------------------------------------------------------
    @abstractmethod
    def initial_state(self) -> Hashable: ...

    @abstractmethod
    def parse_action(self, text: str) -> tuple[list[Any], str | None]:
        """Moves in the action text, or an error that tells the agent the accepted format."""

    @abstractmethod
    def apply(self, state: Hashable, move: Any) -> tuple[Hashable | None, str | None]:
        """The state after one move, or (None, why it is illegal)."""

    @abstractmethod
    def is_solved(self, state: Hashable) -> bool: ...

    @abstractmethod
    def progress_parts(self, state: Hashable) -> dict[str, float]:
        """Named partial-progress measures in [0, 1]; `progress` is their mean."""

    @abstractmethod
    def text(self, state: Hashable) -> str:
        """The board as text (what the agent and `rlvr-gym play` see)."""

    @abstractmethod
    def legend(self) -> str:
        """Symbols and move format, for the prompt."""

    def move_cost(self, state: Hashable, move: Any) -> int:
        """Steps a legal move from `state` counts toward `steps_over_optimal` (Sokoban counts pushes only)."""
        return 1

    def progress(self, state: Hashable) -> float:
        parts = self.progress_parts(state)
        return float(sum(parts.values()) / len(parts))

    # ---- rendering -----------------------------------------------------------------------------------------------
    @abstractmethod
    def cells(self, state: Hashable) -> np.ndarray:
        """(rows, cols) int palette indices of a state."""

    def active_palette(self) -> np.ndarray:
        """Palette entries this instance can show (the decoder picks among these only)."""
        return self.palette

    def full_mask(self, cells: np.ndarray) -> np.ndarray | None:
        """Which cells fill their whole tile (None: all); others are drawn inset on the background colour."""
        return None

    def reference_frame_cells(self, moves: Iterable[Any]) -> list[np.ndarray]:
        """Cell grids of the frames that show a move sequence being played (first = initial state)."""
        state = self.initial_state()
        grids = [self.cells(state)]
        for move in moves:
            state, error = self.apply(state, move)
            if state is None:
                raise ValueError(f"reference move {move!r} is illegal: {error}")
            grids.append(self.cells(state))
        return grids

    # ---- frame path ----------------------------------------------------------------------------------------------
    @abstractmethod
    def frame_state(self, cells: np.ndarray) -> tuple[Hashable | None, str | None]:
        """A decoded cell grid as a frame state, or (None, why it is not a possible board of this task)."""

    @abstractmethod
    def successors(self, state: Hashable) -> Iterable[Hashable]:
        """States one legal move away (for the frame transition search)."""

    def initial_frame_state(self) -> Hashable:
        state, error = self.frame_state(self.cells(self.initial_state()))
        assert state is not None, error
        return state

    def frame_transition_error(self, prev: Hashable, nxt: Hashable, max_moves: int) -> str | None:
        """None when `nxt` equals `prev` or is reachable by 1..max_moves legal moves; else why not."""
        if nxt == prev:
            return None
        frontier = {prev}
        seen = {prev}
        for _ in range(max_moves):
            frontier = {s for state in frontier for s in self.successors(state)} - seen
            if nxt in frontier:
                return None
            seen |= frontier
        return self.describe_illegal(prev, nxt, max_moves)

    def describe_illegal(self, prev: Hashable, nxt: Hashable, max_moves: int) -> str:
        plural = "move" if max_moves == 1 else f"{max_moves} moves"
        return f"the board cannot change like this in one legal {plural}"

    def frame_solved(self, state: Hashable) -> bool:
        return self.is_solved(state)

    def frame_progress_parts(self, state: Hashable) -> dict[str, float]:
        return self.progress_parts(state)

    def trajectory_metrics(self, states: list[Hashable]) -> dict[str, float]:
        """Weight-0 metrics over the whole legal trajectory (text states or frame states), e.g. Maze path F1."""
        return {}


def cell_name(index: int, cols: int) -> str:
    """(row, col) of a flat index, as shown to agents."""
    return f"({index // cols},{index % cols})"
