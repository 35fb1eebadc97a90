"""FlowFree: join each pair of same-coloured endpoints with a path so that the paths fill the n x n board.

Text path: the agent submits one path per colour, e.g. `A: (0,0) (0,1) (1,1)`, starting at one of that colour's
endpoints; a later line for the same colour replaces its path, so it can be drawn step by step. Paths may not
cross or run through another colour's endpoint. Solved = every pair connected and every cell filled.

Frame path: a frame shows cell colours only, not which cells were drawn in which order, so the frame rules are
the cell-level form of the game (as in SAT encodings of FlowFree): cells are only ever added, never recoloured
(recolouring = a crossing flow); every added cell grows its flow from a cell of the same colour (else it jumped);
a flow never branches or touches itself (an endpoint has at most one, any other cell at most two same-coloured
neighbours). Solved = board full, each endpoint has exactly one and every other cell exactly two same-coloured
neighbours, and each colour is one connected piece. Generated puzzles have solutions of that form.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Hashable, Iterable
from typing import Any, ClassVar

import numpy as np

from .base import Puzzle, answer_region, at_line_start, tail_lines

LETTERS = "ABCDEFGHIJKL"
# A path line is `X:` at a line start (after up to LINE_PREFIX blanks or markdown marks). The pattern starts with
# a letter class (no `^` tried at every position, no `\s` that crosses newlines: the old form was quadratic on
# runs of newlines); the line-start test looks back a bounded window. Numbers are maximal digit runs.
_LINE = re.compile(r"([A-La-l])[ \t]*[:=]([^\n]*)")
_NUMBER = re.compile(r"-?\d+")
MAX_CANDIDATE_LINES = 4096
Move = tuple[int, tuple[int, ...]]


def grid_neighbours(n: int) -> list[list[int]]:
    out = []
    for i in range(n * n):
        r, c = divmod(i, n)
        out.append(
            [
                (r + dr) * n + c + dc
                for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1))
                if 0 <= r + dr < n and 0 <= c + dc < n
            ]
        )
    return out


class FlowFreePuzzle(Puzzle):
    family: ClassVar[str] = "flowfree"
    class_names: ClassVar[tuple[str, ...]] = ("empty",) + tuple(f"colour_{ch}" for ch in LETTERS)
    palette: ClassVar[np.ndarray] = np.array(
        # chosen for a minimum distance of 63 in luma-weighted YCbCr (the decoder's space): the old maroon and
        # purple were read as red / magenta after downscale + JPEG 40
        [
            (25, 25, 25),
            (235, 30, 30),
            (0, 150, 0),
            (40, 70, 255),
            (240, 230, 0),
            (255, 120, 0),
            (0, 230, 230),
            (235, 0, 235),
            (0, 255, 0),
            (255, 140, 255),
            (245, 245, 245),
            (140, 120, 140),
            (120, 240, 140),
        ],
        dtype=np.uint8,
    )
    step_unit: ClassVar[str] = "cells"

    def __init__(self, size: int, endpoints: list[tuple[int, int]]) -> None:
        if not 1 <= len(endpoints) <= len(LETTERS):
            raise ValueError(f"FlowFree supports 1..{len(LETTERS)} colours")
        self.size = self.rows = self.cols = size
        self.endpoints = [tuple(pair) for pair in endpoints]
        self.nbrs = grid_neighbours(size)
        self.endpoint_colour = {cell: k for k, pair in enumerate(self.endpoints) for cell in pair}
        if len(self.endpoint_colour) != 2 * len(self.endpoints):
            raise ValueError("endpoints must be distinct cells")

    # ---- spec ----------------------------------------------------------------------------------------------------
    @classmethod
    def from_spec(cls, spec: dict[str, Any]) -> FlowFreePuzzle:
        n = int(spec["size"])
        return cls(n, [(a[0] * n + a[1], b[0] * n + b[1]) for a, b in spec["endpoints"]])

    def to_spec(self) -> dict[str, Any]:
        n = self.size
        return {"size": n, "endpoints": [[list(divmod(a, n)), list(divmod(b, n))] for a, b in self.endpoints]}

    @property
    def num_colours(self) -> int:
        return len(self.endpoints)

    # ---- text rules ----------------------------------------------------------------------------------------------
    def initial_state(self) -> Hashable:
        return tuple(() for _ in self.endpoints)

    def parse_action(self, text: str) -> tuple[list[Any], str | None]:
        """One `X: (r,c) (r,c) ...` line per colour; a colour may appear once per message (no hedged answers)."""
        moves: list[Move] = []
        seen: set[int] = set()
        region = tail_lines(answer_region(text))
        for count, line in enumerate(_LINE.finditer(region)):
            if count >= MAX_CANDIDATE_LINES:
                return [], f"more than {MAX_CANDIDATE_LINES} 'X:' fragments in one message"
            if not at_line_start(region, line.start(), " \t*`>-"):
                continue
            letter = line.group(1).upper()
            k = LETTERS.index(letter)
            if k >= self.num_colours:
                return [], f"there is no colour {letter} on this board"
            if k in seen:
                return [], f"two paths for colour {letter} in one message: send one path per colour"
            seen.add(k)
            cells, error = self._read_cells(letter, line.group(2))
            if error:
                return [], error
            moves.append((k, cells))
        if not moves:
            return [], (
                "no paths found: write one line per colour, e.g. 'A: (0,0) (0,1) (1,1)' with (row,col) "
                "cells starting at one of that colour's endpoints"
            )
        return moves, None

    def _read_cells(self, letter: str, text: str) -> tuple[tuple[int, ...], str | None]:
        numbers: list[int] = []
        for match in _NUMBER.finditer(text):
            digits = match.group(0)
            if len(digits) > 4 or len(numbers) >= 2 * self.size**2:  # no real path needs more
                return (), f"path {letter} is longer than the board or has a number off the board"
            numbers.append(int(digits))
        if len(numbers) % 2:
            return (), f"path {letter}: every cell needs a row and a column, like (0,1)"
        cells = []
        for r, c in zip(numbers[::2], numbers[1::2], strict=True):
            if not (0 <= r < self.size and 0 <= c < self.size):
                return (), f"cell ({r},{c}) of colour {letter} is off the board"
            cells.append(r * self.size + c)
        return tuple(cells), None

    def apply(self, state: Hashable, move: Any) -> tuple[Hashable | None, str | None]:
        k, path = move
        letter = LETTERS[k]
        paths = list(state)  # type: ignore[call-overload]
        if path:
            error = self._path_error(k, path, paths)
            if error:
                return None, f"path {letter}: {error}"
        paths[k] = tuple(path)
        return tuple(paths), None

    def _path_error(self, k: int, path: tuple[int, ...], paths: list[tuple[int, ...]]) -> str | None:
        a, b = self.endpoints[k]
        if path[0] not in (a, b):
            return f"must start at an endpoint of {LETTERS[k]}, {self.name(a)} or {self.name(b)}"
        other = b if path[0] == a else a
        if len(set(path)) != len(path):
            return "visits a cell twice"
        taken = {cell: j for j, p in enumerate(paths) if j != k for cell in p}
        for i, cell in enumerate(path):
            if i and cell not in self.nbrs[path[i - 1]]:
                return f"{self.name(path[i - 1])} -> {self.name(cell)} is not a step to a neighbouring cell"
            owner = self.endpoint_colour.get(cell, taken.get(cell))
            if owner is not None and owner != k:
                return f"crosses colour {LETTERS[owner]} at {self.name(cell)}"
            if cell == other and i != len(path) - 1:
                return f"continues past its endpoint {self.name(other)}"
        return None

    def name(self, cell: int) -> str:
        return f"({cell // self.size},{cell % self.size})"

    def _complete(self, k: int, path: tuple[int, ...]) -> bool:
        return len(path) >= 2 and set((path[0], path[-1])) == set(self.endpoints[k])

    def is_solved(self, state: Hashable) -> bool:
        parts = self.progress_parts(state)
        return parts["pairs_connected"] == 1.0 and parts["cells_filled"] == 1.0

    def progress_parts(self, state: Hashable) -> dict[str, float]:
        paths = list(state)  # type: ignore[call-overload]
        connected = sum(self._complete(k, p) for k, p in enumerate(paths))
        filled = set(self.endpoint_colour) | {cell for p in paths for cell in p}
        return {"pairs_connected": connected / self.num_colours, "cells_filled": len(filled) / self.size**2}

    def progress(self, state: Hashable) -> float:
        """Paid progress is connected pairs only: filling cells without joining a pair is no step towards a
        solution (long detours fill cells too), so `cells_filled` stays a weight-0 metric."""
        return self.progress_parts(state)["pairs_connected"]

    def frame_progress(self, state: Hashable) -> float:
        return self.frame_progress_parts(state)["pairs_connected"]

    def move_cost(self, state: Hashable, move: Any) -> int:
        return max(0, len(move[1]) - 1)

    # ---- views ---------------------------------------------------------------------------------------------------
    def cells(self, state: Hashable) -> np.ndarray:
        grid = np.zeros(self.size**2, dtype=np.int64)
        for k, path in enumerate(state):  # type: ignore[arg-type]
            grid[list(path)] = k + 1
        for cell, k in self.endpoint_colour.items():
            grid[cell] = k + 1
        return grid.reshape(self.size, self.size)

    def active_palette(self) -> np.ndarray:
        return self.palette[: self.num_colours + 1]

    def text(self, state: Hashable) -> str:
        grid = self.cells(state).reshape(-1)
        chars = []
        for i, v in enumerate(grid.tolist()):
            if v == 0:
                chars.append(".")
            else:
                chars.append(LETTERS[v - 1] if i in self.endpoint_colour else LETTERS[v - 1].lower())
        n = self.size
        return "\n".join("".join(chars[r * n : (r + 1) * n]) for r in range(n))

    def legend(self) -> str:
        return (
            "Symbols: capital letters are the endpoints of each colour, lowercase letters are cells already "
            "drawn for that colour, . is empty. Rows and columns count from 0; (0,0) is the top-left cell. "
            "Answer with one line per colour listing its path as (row,col) cells from one endpoint to the "
            "other, e.g. 'A: (0,0) (0,1) (1,1)'. Paths move between neighbouring cells (no diagonals), may "
            "not cross, and together must fill every cell. A later line for a colour replaces its path."
        )

    def reference_frame_cells(self, moves: Iterable[Any]) -> list[np.ndarray]:
        """One frame per drawn cell: each colour's path grows from its first endpoint."""
        grid = self.cells(self.initial_state()).reshape(-1)
        grids = [grid.reshape(self.size, self.size).copy()]
        for k, path in moves:
            for cell in path:
                if grid[cell] == 0:
                    grid[cell] = k + 1
                    grids.append(grid.reshape(self.size, self.size).copy())
        return grids

    # ---- frame rules ---------------------------------------------------------------------------------------------
    def frame_state(self, cells: np.ndarray) -> tuple[Hashable | None, str | None]:
        flat = cells.reshape(-1)
        if flat.min() < 0 or flat.max() > self.num_colours:
            return None, "a cell shows a colour this puzzle does not have"
        for cell, k in self.endpoint_colour.items():
            if flat[cell] != k + 1:
                return None, f"endpoint {self.name(cell)} of colour {LETTERS[k]} is not shown in its colour"
        return tuple(flat.tolist()), None

    def successors(self, state: Hashable) -> Iterable[Hashable]:
        grid = list(state)  # type: ignore[call-overload]
        for i, v in enumerate(grid):
            if v == 0:
                for colour in {grid[j] for j in self.nbrs[i] if grid[j]}:
                    nxt = grid.copy()
                    nxt[i] = colour
                    if self._shape_error(nxt) is None:
                        yield tuple(nxt)

    def _shape_error(self, grid: list[int]) -> str | None:
        """A flow that branches or touches itself (more same-coloured neighbours than a path allows)."""
        for i, v in enumerate(grid):
            if v:
                same = sum(grid[j] == v for j in self.nbrs[i])
                if same > (1 if i in self.endpoint_colour else 2):
                    return f"flow {LETTERS[v - 1]} branches or touches itself at {self.name(i)}"
        return None

    def frame_transition_error(self, prev: Hashable, nxt: Hashable, max_moves: int) -> str | None:
        before, after = list(prev), list(nxt)  # type: ignore[call-overload]
        added = []
        for i, (u, v) in enumerate(zip(before, after, strict=True)):
            if u and v != u:
                what = "erased" if v == 0 else f"recoloured {LETTERS[v - 1]} (a crossing flow)"
                return f"cell {self.name(i)} of flow {LETTERS[u - 1]} was {what}"
            if v and not u:
                added.append(i)
        if len(added) > max_moves:
            return f"{len(added)} cells were drawn at once (at most {max_moves} allowed)"
        grown = set()
        frontier = deque(i for i in added if any(before[j] == after[i] for j in self.nbrs[i]))
        grown.update(frontier)
        while frontier:
            i = frontier.popleft()
            for j in self.nbrs[i]:
                if j in added and j not in grown and after[j] == after[i]:
                    grown.add(j)
                    frontier.append(j)
        for i in added:
            if i not in grown:
                return f"cell {self.name(i)} of flow {LETTERS[after[i] - 1]} is not connected to its flow (a jump)"
        return self._shape_error(after)

    def _components(self, grid: list[int], k: int) -> tuple[set[int], int]:
        a, _ = self.endpoints[k]
        seen = {a}
        queue = deque([a])
        while queue:
            i = queue.popleft()
            for j in self.nbrs[i]:
                if j not in seen and grid[j] == k + 1:
                    seen.add(j)
                    queue.append(j)
        return seen, sum(v == k + 1 for v in grid)

    def frame_solved(self, state: Hashable) -> bool:
        grid = list(state)  # type: ignore[call-overload]
        if 0 in grid:
            return False
        for i, v in enumerate(grid):
            need = 1 if i in self.endpoint_colour else 2
            if sum(grid[j] == v for j in self.nbrs[i]) != need:
                return False
        for k in range(self.num_colours):
            reached, total = self._components(grid, k)
            if len(reached) != total:
                return False
        return True

    def frame_progress_parts(self, state: Hashable) -> dict[str, float]:
        grid = list(state)  # type: ignore[call-overload]
        connected = sum(self.endpoints[k][1] in self._components(grid, k)[0] for k in range(self.num_colours))
        filled = sum(v != 0 for v in grid)
        return {"pairs_connected": connected / self.num_colours, "cells_filled": filled / len(grid)}
