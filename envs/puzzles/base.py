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
    "up": "U",
    "down": "D",
    "left": "L",
    "right": "R",
    "north": "U",
    "south": "D",
    "west": "L",
    "east": "R",
    "restart": RESTART,
    "reset": RESTART,
}
_ARROWS = {"↑": " U ", "↓": " D ", "←": " L ", "→": " R "}
_LETTERS = frozenset("udlr")
_SEPARATORS = re.compile(r"[\s,;.\-`*>\[\](){}'\"|/]+")  # one greedy class: linear, any string width
_MAX_CHUNK = 3 * MAX_MOVES_PER_ACTION  # a longer run without whitespace cannot be a readable move list
_TAG_CASES = ("answer", "ANSWER", "Answer")  # the casings of <answer> tags that are read (plain rfind: linear)
# A `moves:` line is found by searching the REVERSED tail: the first match there is the last line in the reply,
# the pattern starts with a literal (a fast scan) and every quantifier is bounded.
_MOVES_LINE = re.compile(r":[ \t]{0,64}(?:s?evom|rewsna)[ \t]{0,64}(?=\n|\Z)", re.IGNORECASE)
LINE_PREFIX = 64  # blanks/markup allowed before a keyword at the start of a line
# The reward of every puzzle variant: solving pays 0.9, progress (gained over the start, at the final position) 0.1.
# Progress is the dense part; at 0.1 a policy that walks one way forever or pushes boxes at random earns < 3% of a
# solver (docs/reward-contract.md), while the solved board still ranks far above any partial one.
SOLVED_WEIGHT, PROGRESS_WEIGHT = 0.9, 0.1
TAIL = 1 << 16  # line-based formats are read from the last 64 KB only: an answer is short, its end is what counts


def tail_lines(text: str) -> str:
    """The last TAIL characters of `text`, starting at a line boundary (bounds every line scan)."""
    if len(text) <= TAIL:
        return text
    tail = text[-TAIL:]
    return tail[tail.find("\n") + 1 :] if "\n" in tail else ""


def answer_region(text: str) -> str:
    """The part of a reply that holds the answer: the last <answer> block, else the last `moves:` line (in the last
    64 KB), else all of it."""
    close, close_tag = max((text.rfind(f"</{case}>"), f"</{case}>") for case in _TAG_CASES)
    if close >= 0:
        opening, open_tag = max((text.rfind(f"<{case}>", 0, close), f"<{case}>") for case in _TAG_CASES)
        if opening >= 0:
            return text[opening + len(open_tag) : close]
    tail = tail_lines(text)
    line = _MOVES_LINE.search(tail[::-1])
    if line is not None:
        colon = len(tail) - 1 - line.start()
        end = tail.find("\n", colon)
        return tail[colon + 1 : end if end >= 0 else len(tail)]
    return text


def parse_directions(text: str, *, allow_restart: bool = False) -> tuple[list[str], str | None]:
    """Moves U/D/L/R from "UDLR", "up, left", "R R D", arrows; with `allow_restart`, `restart` goes back to the start.

    Returns (moves, error); on an unreadable token the error names it and the moves are empty. A puzzle whose
    prompt does not offer `restart` refuses it like any other unknown word. At most MAX_MOVES_PER_ACTION + 1
    tokens are ever split off, so even a 1 MB reply costs a few C-level passes.
    """
    offered = "U, D, L, R, up/down/left/right" + (" or restart" if allow_restart else "")
    region = answer_region(text)
    for arrow, letter in _ARROWS.items():
        region = region.replace(arrow, letter)
    moves: list[str] = []
    for chunk in region.split(None, MAX_MOVES_PER_ACTION + 1):  # C-speed whitespace split, bounded count
        if len(chunk) > _MAX_CHUNK:
            return [], f"could not read {chunk[:20]!r}... as moves (one word of {len(chunk)} characters)"
        for token in _SEPARATORS.split(chunk):  # a short chunk: the regex split is cheap
            if not token:
                continue
            word = token.lower()
            if word in _WORDS and (allow_restart or _WORDS[word] != RESTART):
                moves.append(_WORDS[word])
            elif token.isascii() and token.isalpha() and set(word) <= _LETTERS:
                moves.extend(word.upper())
            else:
                return [], f"could not read {token[:20]!r} as a move (use {offered})"
            if len(moves) > MAX_MOVES_PER_ACTION:
                return [], f"more than {MAX_MOVES_PER_ACTION} moves in one message"
    if not moves:
        return [], "no moves found (use U, D, L, R, e.g. 'R R D' or 'RRD')"
    return moves, None


def at_line_start(text: str, start: int, allowed: str = " \t") -> bool:
    """Whether only `allowed` characters (at most LINE_PREFIX of them) stand between a line start and `start`."""
    window = text[max(0, start - LINE_PREFIX - 1) : start]
    newline = window.rfind("\n")
    if newline < 0 and start > LINE_PREFIX:
        return False
    return window[newline + 1 :].strip(allowed) == ""


def gained(now: float, start: float) -> float:
    """Progress earned over the starting position, in [0, 1] (what the start already shows is not credited)."""
    if start >= 1.0:
        return 1.0 if now >= 1.0 else 0.0
    return max(0.0, (now - start) / (1.0 - start))


class Puzzle(ABC):
    """One puzzle instance. States are hashable; `cells` maps a state to palette indices for rendering."""

    family: ClassVar[str]
    class_names: ClassVar[tuple[str, ...]]
    palette: ClassVar[np.ndarray]
    step_unit: ClassVar[str] = "moves"

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
        """The progress the reward pays for (default: the mean of the parts); a puzzle narrows it to the parts
        that only a step towards the solution can raise."""
        parts = self.progress_parts(state)
        return float(sum(parts.values()) / len(parts))

    # ---- rendering -----------------------------------------------------------------------------------------------
    @abstractmethod
    def cells(self, state: Hashable) -> np.ndarray:
        """(rows, cols) int palette indices of a state."""

    def active_palette(self) -> np.ndarray:
        """Palette entries this instance can show (the decoder picks among these only)."""
        return self.palette

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

    def frame_progress(self, state: Hashable) -> float:
        parts = self.frame_progress_parts(state)
        return float(sum(parts.values()) / len(parts))

    def trajectory_metrics(self, states: list[Hashable]) -> dict[str, float]:
        """Weight-0 metrics over the whole legal trajectory (text states or frame states), e.g. Maze path F1."""
        return {}
