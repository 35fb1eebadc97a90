"""Frame-sequence puzzle envs (the video path): the observation carries the starting frame as an image, the action
is a whole trajectory of frames.

The action is either a (T, H, W, 3) uint8 array (or a list of (H, W, 3) frames) or text holding a frame reference:
a `data:image/png;base64,...` animated PNG/GIF anywhere in the text, or - when the env is built with
`allow_frame_paths=True` - a path to a .png/.gif/.npy/.npz file. Bad input of any kind is a valid step with
feedback and `valid_action` False, never an exception. `FramesSpace` declares that action space for `check_env`.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from rlvr_gym import ContentPart, Message, StepResult, Task, Verdict

from .base import Puzzle
from .render import as_frame_array, load_frames, png_data_url, render_moves, render_state
from .tasks import Instance, generate_instance
from .text_env import PuzzleEnvBase
from .verify import DEFAULT_MIN_CONFIDENCE, analyze_frames, check_frames, failed_verdict, report_verdict


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
        return (isinstance(x, np.ndarray) and x.dtype == np.uint8 and x.ndim == 4 and x.shape[-1] == 3
                and 1 <= x.shape[0] <= self.max_frames)

    def __repr__(self) -> str:
        return f"FramesSpace(max_frames={self.max_frames}, frame_shape={self.frame_shape})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, FramesSpace) and (other.max_frames, other.frame_shape) == (
            self.max_frames, self.frame_shape)


class PuzzleFramesEnv(PuzzleEnvBase):
    """One attempt per turn: each action is a full trajectory, verified from its first to its last frame."""

    variant: ClassVar[str] = "frames"
    max_turns = 1

    def __init__(self, *, max_frames: int = 512, max_moves_per_transition: int = 1,
                 min_confidence: float = DEFAULT_MIN_CONFIDENCE, allow_frame_paths: bool = False,
                 fps: float = 4.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if max_moves_per_transition < 1:
            raise ValueError("max_moves_per_transition must be >= 1")
        self.max_frames = max_frames
        self.max_moves = max_moves_per_transition
        self.min_confidence = min_confidence
        self.allow_frame_paths = allow_frame_paths
        self.fps = fps
        probe = generate_probe(self)
        self.action_space = FramesSpace(max_frames, (probe.rows * self.tile_size, probe.cols * self.tile_size))
        self._pending: tuple[np.ndarray | None, str | None] = (None, None)
        self.last_frames: np.ndarray | None = None

    def extra_metadata(self) -> dict[str, Any]:
        return {"tile_size": self.tile_size, "frames": {"max_moves_per_transition": self.max_moves,
                                                         "min_confidence": self.min_confidence}}

    def prompt(self, puzzle: Puzzle) -> list[Message]:
        names = ", ".join(f"{name} = RGB{tuple(int(v) for v in colour)}"
                          for name, colour in zip(puzzle.class_names, puzzle.active_palette(), strict=False))
        group = "one legal move" if self.max_moves == 1 else f"at most {self.max_moves} legal moves"
        text = (f"{self.intro(puzzle)}\n\nBoard (also shown as the image):\n{puzzle.text(puzzle.initial_state())}\n\n"
                f"Answer with a video of the solution: a sequence of at most {self.max_frames} RGB frames "
                f"(a (T, H, W, 3) uint8 array, or an animated PNG/GIF as a data:image/png;base64 URL). Frame 0 must "
                f"show this board; each next frame shows the board after {group} (a repeated frame is allowed); the "
                f"last frame shows the solved board. Draw the {puzzle.rows}x{puzzle.cols} board as a grid of equal "
                f"flat tiles ({self.tile_size} px each here; any resolution works) in these colours: {names}.")
        image = png_data_url(render_state(puzzle, puzzle.initial_state(), self.tile_size))
        return [Message(role="user", content=[ContentPart(type="text", text=text),
                                              ContentPart(type="image_url", image_url={"url": image})])]

    def reference_actions(self, instance: Instance) -> list[str]:
        return [png_data_url(render_moves(instance.puzzle, instance.moves, self.tile_size), self.fps)]

    # ---- acting --------------------------------------------------------------------------------------------------
    def read_action(self, action: Any) -> tuple[np.ndarray | None, str | None]:
        """Frames from whatever the agent sent, or why they cannot be used."""
        if isinstance(action, str):
            try:
                action = load_frames(action, allow_paths=self.allow_frame_paths, max_frames=self.max_frames)
            except Exception as exc:  # any unreadable reference is feedback, never a crash
                return None, f"could not read frames: {exc}"
        frames, error = as_frame_array(action)
        if frames is not None and len(frames) > self.max_frames:
            return None, f"{len(frames)} frames is more than the limit of {self.max_frames}"
        return frames, error

    def step(self, action: Any):
        self._pending = self.read_action(action)
        frames = self._pending[0]
        summary = f"<frames {'x'.join(map(str, frames.shape))}>" if frames is not None else (
            action if isinstance(action, str) else f"<invalid frames: {type(action).__name__}>")
        return super().step(summary)

    def respond(self, action: str) -> StepResult:
        assert self.puzzle is not None
        frames, error = self._pending
        self._pending = (None, None)
        if frames is not None:
            frames, error = check_frames(self.puzzle, frames)
        if frames is None:
            self.last_error = error
            return StepResult(observation=[Message(role="user", content=f"Invalid frames: {error}")],
                              valid_action=False, info={"error": error})
        report = analyze_frames(self.puzzle, frames, max_moves=self.max_moves, min_confidence=self.min_confidence)
        verdict = report_verdict(report)
        self.last_frames = frames
        info = {"first_illegal_frame": report.first_illegal_frame, "num_frames": report.num_frames}
        if verdict.passed or self.turn >= self.max_turns:
            return StepResult(reward=verdict.reward, terminated=True, verdict=verdict, info=info)
        text = f"{verdict.feedback} (reward {verdict.reward:.2f}). Try again with a full sequence from frame 0."
        return StepResult(observation=[Message(role="user", content=text)], info={**info, "attempt_verdict": verdict})

    def truncation_verdict(self) -> Verdict:
        return failed_verdict(f"no valid frame sequence in {self.max_turns} turn(s): {self.last_error}")

    def render(self) -> str | np.ndarray | None:
        if self.render_mode == "rgb_array" and self.last_frames is not None:
            return self.last_frames[-1]
        return super().render()

    def start(self, task: Task) -> list[Message]:
        self.last_frames = None
        self.last_error: str | None = None
        return super().start(task)


def generate_probe(env: PuzzleEnvBase) -> Puzzle:
    """Task 0's puzzle, to size the action space (board sizes are fixed by the config)."""
    return generate_instance(env.puzzle_family, env.config, env.seed, 0).puzzle


class SokobanFramesEnv(PuzzleFramesEnv):
    puzzle_family = "sokoban"


class MazeFramesEnv(PuzzleFramesEnv):
    puzzle_family = "maze"


class FlowFreeFramesEnv(PuzzleFramesEnv):
    puzzle_family = "flowfree"


__all__ = ["FlowFreeFramesEnv", "FramesSpace", "MazeFramesEnv", "PuzzleFramesEnv", "SokobanFramesEnv"]
