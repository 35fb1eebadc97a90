"""Puzzle envs: a text env (moves as text, multi-turn) and a frames env (a whole video per attempt) per puzzle.

Both are thin: the task source (`tasks.py`) makes the tasks, the verifier (`verifier.py`) judges; the text env
plays messages on the same `TextPlay` machine the verifier replays, so live and offline verdicts agree.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from rlvr_gym import Env, Message, StepResult, Task, Verdict, feedback
from rlvr_gym.integrations.episode import ActionTool, text_tool

from . import floor
from .frames import DEFAULT_MIN_CONFIDENCE, invalid_verdict
from .prompts import frames_prompt, frames_reference, text_prompt, text_reference
from .render import DEFAULT_TILE, render_state
from .tasks import PuzzleTasks, puzzle_from_task
from .verifier import text_play, verify, wrong_answers


class PuzzleEnv(Env):
    """Shared by both variants: the task source, rendering, offline verify and wrong answers."""

    family: ClassVar[str] = "puzzles"
    task_source = PuzzleTasks  # built by `make_source` for `game`
    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "rgb_array"]}

    def __init__(self, *, game: str, tile_size: int = DEFAULT_TILE, **kwargs: Any) -> None:
        if tile_size < 2:
            raise ValueError("tile_size must be >= 2")
        self.game = game
        self.tile_size = tile_size
        self.puzzle = None
        super().__init__(**kwargs)

    def make_source(self, **options: Any) -> PuzzleTasks:
        """The game's tasks (split, seed, difficulty, config, num_tasks) with this variant's prompt and reference."""
        return PuzzleTasks(game=self.game, **options, **self.source_options())

    def source_options(self) -> dict[str, Any]:
        raise NotImplementedError

    def start(self, task: Task) -> list[Message]:
        self.puzzle = puzzle_from_task(task)
        return task.prompt_messages()

    def wrong_answers(self, task: Task, rng: random.Random) -> list[list[str]]:
        return wrong_answers(task, rng)

    def verify(self, task: Task | dict[str, Any], actions: Sequence[str]) -> Verdict:
        return verify(self.coerce_task(task), list(actions)[: self.max_turns])


class PuzzleTextEnv(PuzzleEnv):
    """Multi-turn text play; terminates when solved, truncates at `max_turns` with the dense verdict."""

    # the frame variant reads an encoded frame sequence, not moves: it keeps the default `respond(text)`
    trainer_tools: ClassVar[tuple[ActionTool, ...]] = (
        text_tool(
            "play",
            "Play moves on the board and see the new board; an illegal move rejects the whole message.",
            "moves",
            "The moves, for example 'R R D' or 'right, down'.",
        ),
    )

    max_turns = 30

    def source_options(self) -> dict[str, Any]:
        return {
            "prompt": lambda instance: text_prompt(self.game, instance, self.max_turns),
            "reference": lambda instance: text_reference(self.game, instance),
            "public": {"variant": "text"},
        }

    def start(self, task: Task) -> list[Message]:
        messages = super().start(task)
        self.play = text_play(task)
        return messages

    def respond(self, action: str) -> StepResult:
        played, error = self.play.act(action)
        if self.play.solved:
            verdict = self.play.verdict(self.turn)
            return StepResult(reward=verdict.reward, terminated=True, verdict=verdict, info={"moves_played": played})
        parts = ", ".join(
            f"{k.replace('_', ' ')} {v:.2f}" for k, v in self.play.puzzle.progress_parts(self.play.state).items()
        )
        head = f"Played {played} move(s)." if error is None else f"{error}. No move of this message was played."
        text = f"{head}\n\nBoard:\n{self.play.puzzle.text(self.play.state)}\n\nNot solved yet ({parts})."
        return StepResult(
            observation=feedback(text), valid_action=error is None, info={"moves_played": played, "error": error}
        )

    def truncation_verdict(self) -> Verdict:
        return self.play.verdict(self.turn)

    def floor_policies(self, task: Task, rng: random.Random) -> dict[str, list[str]]:
        """Non-solving scripts for check-env's reward floor: restarts, one direction, back and forth, stubs."""
        return floor.text_policies(task, self.max_turns)

    def render(self) -> str | np.ndarray | None:
        if self.puzzle is None:
            return None
        if self.render_mode == "ansi":
            return self.puzzle.text(self.play.state)
        if self.render_mode == "rgb_array":
            return render_state(self.puzzle, self.play.state, self.tile_size)
        return None


class FramesSpace(spaces.Space):
    """A frame sequence (T <= max_frames, any H x W, RGB uint8) or a text reference to one."""

    def __init__(self, max_frames: int, frame_shape: tuple[int, int], seed: int | None = None) -> None:
        self.max_frames = max_frames
        self.frame_shape = tuple(frame_shape)
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def sample(self, mask: Any = None, probability: Any = None) -> np.ndarray:
        count = int(self.np_random.integers(1, 4))
        return self.np_random.integers(0, 256, size=(count, *self.frame_shape, 3), dtype=np.uint8)

    def contains(self, x: Any) -> bool:
        if isinstance(x, str):
            return True
        return (
            isinstance(x, np.ndarray)
            and x.dtype == np.uint8
            and x.ndim == 4
            and x.shape[-1] == 3
            and 1 <= x.shape[0] <= self.max_frames
        )

    def __repr__(self) -> str:
        return f"FramesSpace(max_frames={self.max_frames}, frame_shape={self.frame_shape})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, FramesSpace) and (other.max_frames, other.frame_shape) == (
            self.max_frames,
            self.frame_shape,
        )


class PuzzleFramesEnv(PuzzleEnv):
    """One attempt per turn: each action is a whole video, verified from its first to its last frame.

    Text actions (the runner's path) carry one data URL; Gymnasium users may also pass a (T, H, W, 3) array or a
    list of frames to `step`, which hands it to `respond` unchanged.
    """

    max_turns = 1

    def __init__(
        self,
        *,
        max_frames: int = 512,
        max_moves_per_transition: int = 1,
        min_confidence: float = DEFAULT_MIN_CONFIDENCE,
        allow_frame_paths: bool = False,
        fps: float = 4.0,
        **kwargs: Any,
    ) -> None:
        if max_moves_per_transition < 1:
            raise ValueError("max_moves_per_transition must be >= 1")
        if not 1 <= max_frames <= 4096:
            raise ValueError("max_frames must be in 1..4096")
        self.max_frames, self.max_moves, self.min_confidence = max_frames, max_moves_per_transition, min_confidence
        self.allow_frame_paths, self.fps = allow_frame_paths, fps
        super().__init__(**kwargs)
        probe = self.source.instance(0).puzzle
        self.action_space = FramesSpace(max_frames, (probe.rows * self.tile_size, probe.cols * self.tile_size))
        self._frames: Any = None
        self.last_verdict: Verdict | None = None

    def source_options(self) -> dict[str, Any]:
        settings = {
            "max_moves_per_transition": self.max_moves,
            "min_confidence": self.min_confidence,
            "max_frames": self.max_frames,
            "fps": self.fps,
        }
        return {
            "prompt": lambda instance: frames_prompt(
                self.game, instance, tile=self.tile_size, max_moves=self.max_moves, max_frames=self.max_frames
            ),
            "reference": lambda instance: frames_reference(instance, tile=self.tile_size, fps=self.fps),
            "public": {"variant": "frames", "tile_size": self.tile_size, "frames": settings},
        }

    def start(self, task: Task) -> list[Message]:
        self.last_verdict = None
        return super().start(task)

    def step(self, action: Any):
        self._frames = action
        summary = (
            action
            if isinstance(action, str)
            else f"<frames: {type(action).__name__} "
            f"{getattr(action, 'shape', len(action) if isinstance(action, (list, tuple)) else '')}>"
        )
        try:
            return super().step(summary)
        finally:
            self._frames = None

    def respond(self, action: str) -> StepResult:
        assert self.task is not None
        source = self._frames if self._frames is not None else action
        verdict = verify(self.task, [source], allow_paths=self.allow_frame_paths)
        self.last_verdict = verdict
        info = {
            "first_illegal_frame": verdict.components.get("first_illegal_frame", -1.0),
            "num_frames": verdict.components.get("num_frames", 0.0),
        }
        if not verdict.valid:
            return StepResult(
                observation=[Message(role="user", content=f"Invalid frames: {verdict.error}")],
                valid_action=False,
                info={**info, "error": verdict.error},
            )
        if verdict.passed or self.turn >= self.max_turns:
            return StepResult(reward=verdict.reward, terminated=True, verdict=verdict, info=info)
        text = f"{verdict.feedback} (reward {verdict.reward:.2f}). Try again with a full sequence from frame 0."
        return StepResult(observation=[Message(role="user", content=text)], info={**info, "attempt_verdict": verdict})

    def verify(self, task: Task | dict[str, Any], actions: Sequence[Any]) -> Verdict:
        return verify(self.coerce_task(task), list(actions)[: self.max_turns], allow_paths=self.allow_frame_paths)

    def truncation_verdict(self) -> Verdict:
        return self.last_verdict or invalid_verdict(f"no valid frame sequence in {self.max_turns} turn(s)")

    def floor_policies(self, task: Task, rng: random.Random) -> dict[str, list[str]]:
        """Non-solving videos for check-env's reward floor: a held first frame, one move away and back."""
        return floor.frame_policies(task, self.tile_size, self.fps)

    def render(self) -> str | np.ndarray | None:
        if self.puzzle is None:
            return None
        if self.render_mode == "ansi":
            return self.puzzle.text(self.puzzle.initial_state())
        if self.render_mode == "rgb_array":
            return render_state(self.puzzle, self.puzzle.initial_state(), self.tile_size)
        return None


__all__ = ["FramesSpace", "PuzzleFramesEnv", "PuzzleTextEnv"]
