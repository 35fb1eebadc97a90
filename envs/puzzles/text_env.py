"""Text puzzle envs: the agent sees the board as text and sends moves, all at once or a few per message.

Shared by the frame envs: `PuzzleEnvBase` owns the generator config, per-index tasks and the current puzzle.
Rewards (text): 0.75 solved + 0.125 progress + 0.125 valid_moves, with `steps_over_optimal` (Sokoban: pushes over the
push-optimal solver solution; Maze: moves over the BFS shortest path; FlowFree: path cells drawn, revisions
included, over the cells to fill) reported as a weight-0 metric (-1 while unsolved).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from rlvr_gym import Criterion, Env, Message, Rubric, StepResult, Task, Verdict, feedback

from .base import RESTART, Puzzle
from .render import DEFAULT_TILE, render_state
from .tasks import FAMILIES, Instance, generate_instance, ground_truth, make_config, puzzle_from_task

TEXT_RUBRIC = Rubric(
    [
        Criterion("solved", lambda **c: c["solved"], 0.75),
        Criterion("progress", lambda **c: c["progress"], 0.125),
        Criterion("valid_moves", lambda **c: c["valid_moves"], 0.125),
        Criterion("steps_over_optimal", lambda **c: c["steps_over_optimal"], 0.0),
        Criterion("steps", lambda **c: c["steps"], 0.0),
        Criterion("optimal_steps", lambda **c: c["optimal_steps"], 0.0),
    ],
    pass_on="solved",
)

_MOVES = ("Send moves as letters U, D, L, R (e.g. 'R R D' or 'RRD' or 'right, right, down'). You may send the "
          "whole solution in one message or a few moves per message; after each message you see the new board. An "
          "illegal move is rejected and the moves after it are not played.")
_FORMATS = {
    "sokoban": _MOVES + " 'restart' puts the board back to the start.",
    "maze": _MOVES,
    "flowfree": "Send one line per colour: 'A: (0,0) (0,1) (1,1)' lists colour A's path as (row,col) cells. You may "
                "send all paths in one message, or some paths (even unfinished ones) per message and extend them "
                "later; after each message you see the new board. A path that breaks the rules is rejected.",
}


class PuzzleEnvBase(Env):
    """Generator config, tasks and the current puzzle, shared by the text and frame variants."""

    family: ClassVar[str] = "puzzles"
    puzzle_family: ClassVar[str] = ""
    variant: ClassVar[str] = "text"
    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "rgb_array"]}
    max_turns = 30

    def __init__(self, *, difficulty: str = "medium", config: dict[str, Any] | None = None, seed: int = 0,
                 num_tasks: int | None = None, tile_size: int = DEFAULT_TILE, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.difficulty = difficulty
        self.config = make_config(self.puzzle_family, difficulty, config)
        self.seed = seed
        self._num_tasks = num_tasks
        if tile_size < 2:
            raise ValueError("tile_size must be >= 2")
        self.tile_size = tile_size
        self.puzzle: Puzzle | None = None
        self._tasks: dict[int, Task] = {}  # built tasks (frame references are costly to encode)

    @property
    def num_tasks(self) -> int | None:
        return self._num_tasks

    # ---- tasks ---------------------------------------------------------------------------------------------------
    def get_task(self, index: int) -> Task:
        if index not in self._tasks:
            if len(self._tasks) >= 256:
                self._tasks.pop(next(iter(self._tasks)))
            self._tasks[index] = self.build_task(index)
        return self._tasks[index].model_copy(deep=True)  # callers may keep and mutate what they get

    def build_task(self, index: int) -> Task:
        instance = generate_instance(self.puzzle_family, self.config, self.seed, index)
        puzzle = instance.puzzle
        variant = "" if self.variant == "text" else f"-{self.variant}"
        return Task(
            id=f"{self.puzzle_family}{variant}-{self.difficulty}-s{self.seed}-{index}",
            prompt=self.prompt(puzzle),
            ground_truth=ground_truth(self.puzzle_family, instance),
            reference_actions=self.reference_actions(instance),
            metadata={
                "source": f"rlvr_gym.envs.puzzles.{self.puzzle_family}",
                "family": self.puzzle_family, "variant": self.variant, "index": index, "seed": self.seed,
                "difficulty": self.difficulty, "config": self.config.model_dump(),
                "rows": puzzle.rows, "cols": puzzle.cols, "optimal_steps": instance.optimal,
                "step_unit": puzzle.step_unit, **self.extra_metadata(),
            },
        )

    def extra_metadata(self) -> dict[str, Any]:
        return {}

    def prompt(self, puzzle: Puzzle) -> list[Message]:
        raise NotImplementedError

    def reference_actions(self, instance: Instance) -> list[str]:
        raise NotImplementedError

    def start(self, task: Task) -> list[Message]:
        self.puzzle = puzzle_from_task(task)
        self.state = self.puzzle.initial_state()
        return task.prompt_messages()

    def intro(self, puzzle: Puzzle) -> str:
        title = FAMILIES[self.puzzle_family].title
        return f"You are solving a {title} puzzle ({puzzle.rows}x{puzzle.cols} board). {puzzle.legend()}"

    # ---- rendering -----------------------------------------------------------------------------------------------
    def render(self) -> str | np.ndarray | None:
        if self.puzzle is None:
            return None
        if self.render_mode == "ansi":
            return self.puzzle.text(self.state)
        if self.render_mode == "rgb_array":
            return render_state(self.puzzle, self.state, self.tile_size)
        return None


class PuzzleTextEnv(PuzzleEnvBase):
    """Multi-turn text play; terminates when solved, truncates at `max_turns` with the dense verdict."""

    def prompt(self, puzzle: Puzzle) -> list[Message]:
        text = (f"{self.intro(puzzle)}\n\nBoard:\n{puzzle.text(puzzle.initial_state())}\n\n"
                f"{_FORMATS[self.puzzle_family]} You have {self.max_turns} messages. Put only your answer in the "
                f"message, or wrap it in <answer>...</answer>.")
        return [Message(role="user", content=text)]

    def reference_actions(self, instance: Instance) -> list[str]:
        return [FAMILIES[self.puzzle_family].answer_text(instance.puzzle, instance.moves)]

    def start(self, task: Task) -> list[Message]:
        messages = super().start(task)
        self.steps = 0
        self.legal = 0
        self.visited = [self.state]
        self.illegal = 0
        return messages

    def respond(self, action: str) -> StepResult:
        assert self.puzzle is not None and self.task is not None
        moves, error = self.puzzle.parse_action(action)
        played, parsed = 0, error is None
        if parsed:
            for move in moves:
                cost = self.puzzle.move_cost(self.state, move)
                new, why = self.puzzle.apply(self.state, move)
                if new is None:
                    error = f"move {played + 1} ({self._show(move)}) is illegal: {why}"
                    break
                self.state, self.steps, self.legal, played = new, self.steps + cost, self.legal + 1, played + 1
                self.visited.append(new)
                if self.puzzle.is_solved(self.state):
                    break
        if error is not None:
            self.illegal += 1
        if self.puzzle.is_solved(self.state):
            verdict = self.score()
            return StepResult(reward=verdict.reward, terminated=True, valid_action=error is None, verdict=verdict,
                              info={"moves_played": played})
        parts = ", ".join(f"{k.replace('_', ' ')} {v:.2f}" for k, v in self.puzzle.progress_parts(self.state).items())
        if error is None:
            head = f"Played {played} move(s)."
        else:
            head = f"{error}." + (f" Played the {played} move(s) before it." if parsed else "")
        text = f"{head}\n\nBoard:\n{self.puzzle.text(self.state)}\n\nNot solved yet ({parts})."
        return StepResult(observation=feedback(text), valid_action=error is None,
                          info={"moves_played": played, "error": error})

    @staticmethod
    def _show(move: Any) -> str:
        return move if isinstance(move, str) else f"path {move[0]}"

    def score(self) -> Verdict:
        """Dense verdict of the current state (also the truncation verdict)."""
        assert self.puzzle is not None and self.task is not None
        solved = self.puzzle.is_solved(self.state)
        optimal = float(self.task.ground_truth["optimal_steps"])
        attempted = self.legal + self.illegal
        components = {
            "solved": float(solved),
            "progress": 1.0 if solved else self.puzzle.progress(self.state),
            "valid_moves": self.legal / attempted if attempted else 0.0,
            "steps_over_optimal": self.steps - optimal if solved else -1.0,
            "steps": float(self.steps),
            "optimal_steps": optimal,
        }
        note = "solved" if solved else f"not solved after {self.turn} message(s)"
        verdict = TEXT_RUBRIC.combine(components, feedback=note)
        verdict.components.update(self.puzzle.progress_parts(self.state))
        verdict.components.update(self.puzzle.trajectory_metrics(self.visited))
        return verdict

    def truncation_verdict(self) -> Verdict:
        return self.score()


class SokobanEnv(PuzzleTextEnv):
    puzzle_family = "sokoban"


class MazeEnv(PuzzleTextEnv):
    puzzle_family = "maze"


class FlowFreeEnv(PuzzleTextEnv):
    puzzle_family = "flowfree"


__all__ = ["FlowFreeEnv", "MazeEnv", "PuzzleEnvBase", "PuzzleTextEnv", "RESTART", "SokobanEnv", "TEXT_RUBRIC"]
