"""The puzzles verifier: `verify(task, trajectory) -> Verdict` and `wrong_answers(task, rng)`.

Text variant: the trajectory's messages are replayed on the puzzle's rules (`TextPlay`, the same machine the env
plays). Every message is atomic: a message with an unreadable or illegal move, or one that keeps moving after the
puzzle is solved, is rejected whole, so a reply that lists several candidate solutions cannot win with one of them.
Reward 0.9 solved + 0.1 progress, progress being what the final position gained over the start (so restarts,
back-and-forth moves and moves that undo each other earn nothing); valid moves are a constraint (an illegal
message is not played) and a weight-0 metric, never a reward. No readable message = invalid.

Frames variant: each action is a whole video (`frames.verify_frames`); the first passing attempt counts, else the
last. Unreadable frames are an invalid verdict, never a crash.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from rlvr_gym import Criterion, Rubric, Task, Verdict

from .base import DIRECTIONS, PROGRESS_WEIGHT, SOLVED_WEIGHT, Puzzle, gained
from .frames import DEFAULT_MIN_CONFIDENCE, invalid_verdict, verify_frames
from .media import FrameLimits
from .render import png_data_url, render_grids
from .tasks import GAMES, Instance, PuzzleTasks, paths_text, puzzle_from_task, task_solution

TEXT_RUBRIC = Rubric(
    [
        Criterion("solved", lambda play: float(play.solved), SOLVED_WEIGHT),
        Criterion("progress", lambda play: 1.0 if play.solved else play.progress, PROGRESS_WEIGHT),
        Criterion("valid_moves", lambda play: play.valid_fraction, 0.0),  # a constraint (metric), never a reward
        Criterion("steps_over_optimal", lambda play: play.steps - play.optimal if play.solved else -1.0, 0.0),
        Criterion("steps", lambda play: float(play.steps), 0.0),
        Criterion("optimal_steps", lambda play: play.optimal, 0.0),
    ],
    pass_on="solved",
)


class TextPlay:
    """One text episode on a puzzle: atomic messages, counted moves, the verdict of where it stands."""

    def __init__(self, puzzle: Puzzle, optimal: float) -> None:
        self.puzzle = puzzle
        self.optimal = float(optimal)
        self.state: Hashable = puzzle.initial_state()
        self.visited = [self.state]
        self.steps = 0
        self.legal = 0  # moves played
        self.rejected = 0  # messages rejected (unreadable or illegal)
        self.readable = 0  # messages whose moves could be read
        self.last_error: str | None = None

    @property
    def solved(self) -> bool:
        return self.puzzle.is_solved(self.state)

    @property
    def progress(self) -> float:
        return gained(self.puzzle.progress(self.state), self.puzzle.progress(self.puzzle.initial_state()))

    @property
    def valid_fraction(self) -> float:
        attempted = self.legal + self.rejected
        return self.legal / attempted if attempted else 0.0

    def act(self, text: str) -> tuple[int, str | None]:
        """Play one message: (moves played, error). On an error nothing of the message is played."""
        moves, error = self.puzzle.parse_action(text)
        if error is None:
            self.readable += 1
            error, state, steps, visited = self._simulate(moves)
        if error is not None:
            self.rejected += 1
            self.last_error = error
            return 0, error
        self.state, self.steps = state, steps
        self.legal += len(moves)
        self.visited.extend(visited)
        return len(moves), None

    def _simulate(self, moves: list[Any]) -> tuple[str | None, Hashable, int, list[Hashable]]:
        state, steps, visited = self.state, self.steps, []
        for i, move in enumerate(moves, start=1):
            if self.puzzle.is_solved(state):
                return f"move {i} comes after the puzzle is already solved (stop once it is solved)", None, 0, []
            cost = self.puzzle.move_cost(state, move)
            new, why = self.puzzle.apply(state, move)
            if new is None:
                shown = move if isinstance(move, str) else f"path {move[0]}"
                return f"move {i} ({shown}) is illegal: {why}", None, 0, []
            state, steps = new, steps + cost
            visited.append(new)
        return None, state, steps, visited

    def verdict(self, turns: int) -> Verdict:
        if not self.readable:
            return Verdict.invalid(
                self.last_error or "no moves given", components=dict.fromkeys(TEXT_RUBRIC.weights, 0.0)
            )
        note = (
            "solved"
            if self.solved
            else f"not solved after {turns} message(s)"
            + (f"; last rejected message: {self.last_error}" if self.last_error else "")
        )
        verdict = TEXT_RUBRIC.score(feedback=note, play=self)
        verdict.components.update(self.puzzle.progress_parts(self.state))
        verdict.components.update(self.puzzle.trajectory_metrics(self.visited))
        return verdict


def text_play(task: Task) -> TextPlay:
    return TextPlay(puzzle_from_task(task), task.ground_truth["optimal_steps"])


def frame_settings(task: Task) -> dict[str, Any]:
    settings = task.metadata.get("frames", {})
    return {
        "max_moves": int(settings.get("max_moves_per_transition", 1)),
        "min_confidence": float(settings.get("min_confidence", DEFAULT_MIN_CONFIDENCE)),
        "limits": FrameLimits(max_frames=int(settings.get("max_frames", FrameLimits.max_frames))),
    }


def verify(task: Task | dict[str, Any], trajectory: Sequence[Any], *, allow_paths: bool = False) -> Verdict:
    """The verdict of a whole trajectory (text messages, or frame videos for the frames variant); pure."""
    task = task if isinstance(task, Task) else Task.model_validate(task)
    if task.metadata.get("variant") == "frames":
        puzzle = puzzle_from_task(task)
        verdict = invalid_verdict("no frames given")
        for action in trajectory:
            verdict = verify_frames(puzzle, action, allow_paths=allow_paths, **frame_settings(task))
            if verdict.passed:
                break
        return verdict
    play = text_play(task)
    turns = 0
    for turns, action in enumerate(trajectory, start=1):  # noqa: B007 - turns is used after the loop
        play.act(action if isinstance(action, str) else str(action))
        if play.solved:
            break
    return play.verdict(turns)


# ---- wrong answers (for `rlvr-gym check-env` and the tests) ------------------------------------------------------
def other_instance(task: Task) -> Instance:
    """The next instance of the same source: its solution is a plausible answer for the wrong puzzle."""
    meta = task.metadata
    source = PuzzleTasks(
        game=meta["family"],
        split=meta["split"],
        seed=meta["seed"],
        difficulty=meta["difficulty"],
        config=meta["config"],
    )
    return source.instance(meta["index"] + 1)


def wrong_answers(task: Task, rng: random.Random) -> list[list[str]]:
    """Wrong trajectories that must not pass: illegal, truncated, hedged, tampered or for another instance."""
    if task.metadata.get("variant") == "frames":
        fps = float(task.metadata.get("frames", {}).get("fps", 4.0))
        return [
            [png_data_url(render_grids(puzzle_from_task(task), grids), fps)]
            for grids in wrong_frame_grids(task, rng).values()
        ]
    return [[text] for text in wrong_texts(task, rng).values()]


def wrong_texts(task: Task, rng: random.Random) -> dict[str, str]:
    puzzle, moves = puzzle_from_task(task), task_solution(task)
    game = task.ground_truth["game"]
    answer = GAMES[game].answer_text
    other = other_instance(task)
    if game == "flowfree":
        k = rng.randrange(len(moves))
        short = [(c, path[:-1]) if c == k else (c, path) for c, path in moves]
        candidates = {
            "truncated_path": paths_text(puzzle, short),
            "missing_colour": paths_text(puzzle, [m for m in moves if m[0] != k]),
            "other_instance": paths_text(other.puzzle, other.moves),
            "hedged_two_paths": paths_text(puzzle, moves) + "\n" + paths_text(puzzle, short[k : k + 1]),
            "reversed_letters": paths_text(puzzle, [(len(moves) - 1 - c, path) for c, path in moves]),
        }
    else:
        cut = rng.randint(1, max(1, min(3, len(moves) - 1)))
        at = rng.randrange(len(moves))
        candidates = {
            "truncated": answer(puzzle, moves[:-cut]),
            "illegal_move": answer(puzzle, _with_illegal_move(puzzle, moves, at)),
            "keeps_moving": answer(puzzle, [*moves, *_one_legal_move(puzzle, moves)]),
            "other_instance": answer(other.puzzle, other.moves),
            "flipped_move": answer(puzzle, [*moves[:at], _FLIP[moves[at]], *moves[at + 1 :]]),
        }
    return {name: text for name, text in candidates.items() if text.strip() and not verify(task, [text]).passed}


_FLIP = {"U": "D", "D": "U", "L": "R", "R": "L"}


def _replay(puzzle: Puzzle, moves: list[str]) -> list[Hashable]:
    states = [puzzle.initial_state()]
    for move in moves:
        states.append(puzzle.apply(states[-1], move)[0])
    return states


def _with_illegal_move(puzzle: Puzzle, moves: list[str], at: int) -> list[str]:
    states = _replay(puzzle, moves)
    for i in [*range(at, len(moves)), *range(at)]:
        for move in DIRECTIONS:
            if puzzle.apply(states[i], move)[0] is None:
                return [*moves[:i], move, *moves[i:]]
    return moves[:-1]


def _one_legal_move(puzzle: Puzzle, moves: list[str]) -> list[str]:
    final = _replay(puzzle, moves)[-1]
    return [next((m for m in DIRECTIONS if puzzle.apply(final, m)[0] is not None), "U")]


def wrong_frame_grids(task: Task, rng: random.Random) -> dict[str, list[np.ndarray]]:
    """Cell grids of wrong videos, each confirmed wrong by the rules on the clean grids."""
    puzzle = puzzle_from_task(task)
    grids = puzzle.reference_frame_cells(task_solution(task))
    other = other_instance(task)
    max_moves = frame_settings(task)["max_moves"]
    k = rng.randrange(1, len(grids) - 1) if len(grids) > 2 else 1
    candidates = {
        "truncated": grids[:-1],
        "skipped_frame": _skip_a_frame(puzzle, grids, k, max_moves),
        "tampered_cell": _tamper(puzzle, grids, k, rng),
        "jump_to_solved": grids[:k] + [grids[-1]],
        "other_instance": other.puzzle.reference_frame_cells(other.moves),
        "reversed": grids[::-1],
    }
    return {name: g for name, g in candidates.items() if g and not _grids_pass(puzzle, g, max_moves)}


def _grids_pass(puzzle: Puzzle, grids: list[np.ndarray], max_moves: int) -> bool:
    """The rules' own judgement of clean grids (no decoding): start, legal changes, solved end."""
    if grids[0].shape != (puzzle.rows, puzzle.cols):
        return False
    states = [puzzle.frame_state(g)[0] for g in grids]
    if states[0] != puzzle.initial_frame_state() or any(s is None for s in states):
        return False
    if any(puzzle.frame_transition_error(a, b, max_moves) for a, b in zip(states, states[1:], strict=False)):
        return False
    return puzzle.frame_solved(states[-1])


def _skip_a_frame(puzzle: Puzzle, grids: list[np.ndarray], k: int, max_moves: int) -> list[np.ndarray]:
    """Drop frames after k until the change is more than `max_moves` legal moves (a jump)."""
    for stop in range(k + 1, len(grids)):
        a, b = puzzle.frame_state(grids[k - 1])[0], puzzle.frame_state(grids[stop])[0]
        if puzzle.frame_transition_error(a, b, max_moves):
            return grids[:k] + grids[stop:]
    return grids[:k] + [grids[-1]]


def _tamper(puzzle: Puzzle, grids: list[np.ndarray], k: int, rng: random.Random) -> list[np.ndarray]:
    """Recolour one cell from frame k on, to another class of this puzzle."""
    classes = len(puzzle.active_palette())
    r, c = rng.randrange(puzzle.rows), rng.randrange(puzzle.cols)
    new = (int(grids[k][r, c]) + rng.randrange(1, classes)) % classes
    out = [g.copy() for g in grids]
    for g in out[k:]:
        g[r, c] = new
    return out
