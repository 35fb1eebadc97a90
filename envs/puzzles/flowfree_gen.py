"""FlowFree generation (a random Hamiltonian path cut into flows) and a backtracking solver.

Generation: randomise a boustrophedon Hamiltonian path with backbite moves, cut it into pieces that never touch
themselves (no two non-consecutive cells of a piece are neighbours), and join pieces end to end while they stay
that way until the drawn colour count is reached; the pieces' ends are the endpoints,
so the puzzle is solvable by construction, with a solution of the cell-level form the frame verifier checks.
Solver: depth-first search that extends the most constrained flow head, pruning with dead-end cells, head/target
connectivity and empty regions no unfinished flow can reach; it finds solutions of the same form.
"""

from __future__ import annotations

import random
from collections import deque

from pydantic import BaseModel, Field, model_validator

from .flowfree import LETTERS, FlowFreePuzzle, grid_neighbours


class FlowFreeConfig(BaseModel):
    """Difficulty knobs: board size and the range of colour counts (fewer colours = longer flows)."""

    size: int = Field(6, ge=3, le=12)
    min_colours: int = Field(4, ge=1, le=len(LETTERS))
    max_colours: int = Field(6, ge=1, le=len(LETTERS))
    backbite_moves: int = Field(0, ge=0, description="0 = 20 per cell")
    max_attempts: int = Field(400, ge=1)

    @model_validator(mode="after")
    def _range(self) -> FlowFreeConfig:
        if self.min_colours > self.max_colours:
            raise ValueError("min_colours > max_colours")
        if 3 * self.min_colours > self.size**2:
            raise ValueError("board too small for min_colours flows of length >= 3")
        return self


FLOWFREE_PRESETS: dict[int, dict] = {  # the shared difficulty scale 1..5 (2, 3, 4 were easy, medium, hard)
    1: {"size": 5, "min_colours": 2, "max_colours": 3},
    2: {"size": 5, "min_colours": 3, "max_colours": 5},
    3: {"size": 6, "min_colours": 4, "max_colours": 6},
    4: {"size": 8, "min_colours": 6, "max_colours": 9},
    5: {"size": 9, "min_colours": 7, "max_colours": 10},
}


# ---- generator ---------------------------------------------------------------------------------------------------
def _serpentine(n: int) -> list[int]:
    return [r * n + (c if r % 2 == 0 else n - 1 - c) for r in range(n) for c in range(n)]


def _backbite(path: list[int], nbrs: list[list[int]], moves: int, rng: random.Random) -> list[int]:
    """Random Hamiltonian-path moves: join an end to a neighbour and reverse the piece after it."""
    for _ in range(moves):
        if rng.random() < 0.5:
            path.reverse()
        end = path[-1]
        options = [x for x in nbrs[end] if x != path[-2]]
        if not options:
            continue
        i = path.index(rng.choice(options))
        path[i + 1 :] = path[i + 1 :][::-1]
    return path


def is_induced(path: list[int], nbrs: list[list[int]]) -> bool:
    """No cell of the path neighbours a path cell other than its predecessor and successor."""
    index = {cell: i for i, cell in enumerate(path)}
    return all(abs(index[j] - i) == 1 for i, cell in enumerate(path) for j in nbrs[cell] if j in index)


def _cut(path: list[int], nbrs: list[list[int]], mean_len: float, rng: random.Random) -> list[list[int]] | None:
    pieces: list[list[int]] = []
    piece: list[int] = []
    members: set[int] = set()
    limit = max(3, round(rng.uniform(0.5, 1.5) * mean_len))
    for cell in path:
        touches = any(j in members and j != piece[-1] for j in nbrs[cell]) if piece else False
        if piece and (len(piece) >= limit or touches):
            pieces.append(piece)
            piece, members = [], set()
            limit = max(3, round(rng.uniform(0.5, 1.5) * mean_len))
        piece.append(cell)
        members.add(cell)
    pieces.append(piece)
    i = 0
    while i < len(pieces):  # fold pieces shorter than 3 into a neighbour along the Hamiltonian path
        if len(pieces[i]) >= 3:
            i += 1
            continue
        if i > 0 and is_induced(pieces[i - 1] + pieces[i], nbrs):
            pieces[i - 1] += pieces.pop(i)
        elif i + 1 < len(pieces) and is_induced(pieces[i] + pieces[i + 1], nbrs):
            pieces[i] += pieces.pop(i + 1)
        else:
            return None
    return pieces


def _merge(pieces: list[list[int]], nbrs: list[list[int]], target: int, rng: random.Random) -> list[list[int]]:
    """Join pieces end to end (when the joined path still never touches itself) until `target` remain."""
    pieces = [list(p) for p in pieces]
    while len(pieces) > target:
        options = []
        for i, first in enumerate(pieces):
            for j, second in enumerate(pieces):
                if i == j:
                    continue
                for a in (first, first[::-1]):
                    for b in (second, second[::-1]):
                        if b[0] in nbrs[a[-1]] and is_induced(a + b, nbrs):
                            options.append((i, j, a + b))
        if not options:
            break
        i, j, joined = rng.choice(options)
        pieces = [p for k, p in enumerate(pieces) if k not in (i, j)] + [joined]
    return pieces


def generate_flowfree(config: FlowFreeConfig, rng: random.Random) -> tuple[FlowFreePuzzle, list[list[int]]]:
    """A puzzle and its construction solution (one path per colour, endpoint to endpoint)."""
    n = config.size
    nbrs = grid_neighbours(n)
    path = _backbite(_serpentine(n), nbrs, config.backbite_moves or 20 * n * n, rng)
    for attempt in range(config.max_attempts):
        if attempt % 4 == 3:  # a few cuts per path, then stir the path some more
            path = _backbite(path, nbrs, 2 * n * n, rng)
        target = rng.randint(config.min_colours, config.max_colours)
        pieces = _cut(path, nbrs, n * n / target, rng)
        if pieces is not None and len(pieces) > target:
            pieces = _merge(pieces, nbrs, target, rng)
        if pieces is None or not config.min_colours <= len(pieces) <= config.max_colours:
            continue
        rng.shuffle(pieces)
        puzzle = FlowFreePuzzle(n, [(p[0], p[-1]) for p in pieces])
        return puzzle, pieces
    raise RuntimeError(f"no FlowFree board found in {config.max_attempts} attempts for {config}")


# ---- solver ------------------------------------------------------------------------------------------------------
class _Search:
    """Mutable search state; `grid[i]` is a colour index or -1."""

    def __init__(self, puzzle: FlowFreePuzzle, max_nodes: int) -> None:
        self.n2 = puzzle.size**2
        self.nbrs = puzzle.nbrs
        self.grid = [-1] * self.n2
        for k, (a, b) in enumerate(puzzle.endpoints):
            self.grid[a] = self.grid[b] = k
        self.targets = [b for _, b in puzzle.endpoints]
        self.paths = [[a] for a, _ in puzzle.endpoints]
        self.done = [b in self.nbrs[a] for a, b in puzzle.endpoints]
        self.nodes = 0
        self.max_nodes = max_nodes

    def moves(self, k: int) -> list[int]:
        head, target, grid = self.paths[k][-1], self.targets[k], self.grid
        out = []
        for x in self.nbrs[head]:
            if grid[x] == -1 and all(grid[y] != k or y == head or y == target for y in self.nbrs[x]):
                out.append(x)
        return out

    def feasible(self) -> bool:
        grid, nbrs = self.grid, self.nbrs
        open_ends = set()
        for k, finished in enumerate(self.done):
            if not finished:
                open_ends.add(self.paths[k][-1])
                open_ends.add(self.targets[k])
        comp = [-1] * self.n2
        count = 0
        for i in range(self.n2):
            if grid[i] != -1:
                continue
            if sum(grid[j] == -1 or j in open_ends for j in nbrs[i]) < 2:
                return False  # a dead end: this cell could never become part of a path
            if comp[i] == -1:
                comp[i] = count
                queue = deque([i])
                while queue:
                    u = queue.popleft()
                    for j in nbrs[u]:
                        if grid[j] == -1 and comp[j] == -1:
                            comp[j] = count
                            queue.append(j)
                count += 1
        served = [False] * count
        for k, finished in enumerate(self.done):
            if finished:
                continue
            near_head = {comp[j] for j in nbrs[self.paths[k][-1]] if grid[j] == -1}
            near_target = {comp[j] for j in nbrs[self.targets[k]] if grid[j] == -1}
            shared = near_head & near_target
            if not shared:
                return False
            for c in shared:
                served[c] = True
        return all(served)

    def solve(self) -> bool:
        self.nodes += 1
        if self.nodes > self.max_nodes:
            return False
        best_k, best_moves = -1, None
        for k, finished in enumerate(self.done):
            if not finished:
                options = self.moves(k)
                if best_moves is None or len(options) < len(best_moves):
                    best_k, best_moves = k, options
                    if len(options) <= 1:
                        break
        if best_moves is None:
            return -1 not in self.grid
        target = self.targets[best_k]
        for x in best_moves:
            self.grid[x] = best_k
            self.paths[best_k].append(x)
            finishing = target in self.nbrs[x]
            self.done[best_k] = finishing
            if self.feasible() and self.solve():
                return True
            self.done[best_k] = False
            self.paths[best_k].pop()
            self.grid[x] = -1
        return False


def solve_flowfree(puzzle: FlowFreePuzzle, max_nodes: int = 200_000) -> list[list[int]] | None:
    """One path per colour (first endpoint to second) filling the board, or None (unsolvable or over budget)."""
    search = _Search(puzzle, max_nodes)
    if not search.feasible() or not search.solve():
        return None
    return [path + [target] for path, target in zip(search.paths, search.targets, strict=True)]
