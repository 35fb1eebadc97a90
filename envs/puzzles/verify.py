"""Frame-sequence verification (the VideoRLVR path): decode frames to boards, check the first board, every
transition and the last board, and turn that into decomposed dense rewards.

`verify_frames(task, frames)` is pure: it needs only the task's ground truth (the puzzle spec) and the frames.
Progress is measured at the end of the legal prefix, so a sequence that reaches a solved-looking last frame
through an illegal jump gets neither `solved` nor the progress of the frames after the jump.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rlvr_gym import Criterion, Rubric, Task, Verdict

from .base import Puzzle
from .decode import decode_frames
from .render import as_frame_array, load_frames
from .tasks import puzzle_from_task

DEFAULT_MIN_CONFIDENCE = 0.1  # below this a frame counts as unreadable; lossy 8-px cells stay above 0.14
FRAME_RUBRIC = Rubric(
    [
        Criterion("solved", lambda **c: c["solved"], 0.625),
        Criterion("progress", lambda **c: c["progress"], 0.25),
        Criterion("legal_transitions", lambda **c: c["legal_transitions"], 0.125),
        Criterion("first_frame", lambda **c: c["first_frame"], 0.0),
        Criterion("decode_confidence", lambda **c: c["decode_confidence"], 0.0),
        Criterion("first_illegal_frame", lambda **c: c["first_illegal_frame"], 0.0),
        Criterion("num_frames", lambda **c: c["num_frames"], 0.0),
    ],
    pass_on="solved",
)


@dataclass
class FrameReport:
    """Everything the verifier found, frame by frame (for feedback, debugging and tests)."""

    num_frames: int
    confidence: np.ndarray  # (T,) least certain cell per frame
    frame_errors: list[str | None]  # why frame t is not a board of this task (None = fine)
    transition_errors: list[str | None]  # entry t-1 is about the change from frame t-1 to frame t
    first_frame_ok: bool
    first_illegal_frame: int | None  # first frame t that is undecodable or reached illegally
    progress_parts: dict[str, float] = field(default_factory=dict)
    solved: bool = False
    metrics: dict[str, float] = field(default_factory=dict)  # trajectory metrics over the legal prefix

    @property
    def legal_fraction(self) -> float:
        if not self.first_frame_ok or self.num_frames < 2:
            return 0.0
        return sum(e is None for e in self.transition_errors) / (self.num_frames - 1)

    def feedback(self) -> str:
        if not self.first_frame_ok:
            return f"frame 0 is not the task's starting board: {self.frame_errors[0] or 'it shows another board'}"
        if self.first_illegal_frame is not None:
            t = self.first_illegal_frame
            why = self.frame_errors[t] or self.transition_errors[t - 1]
            return f"frame {t} is illegal ({why}); {self.num_frames} frames, later frames are not credited"
        if self.solved:
            return f"solved: all {self.num_frames - 1} transitions are legal and the last board is solved"
        parts = ", ".join(f"{k} {v:.2f}" for k, v in self.progress_parts.items())
        return f"all transitions are legal but the last board is not solved ({parts})"


def analyze_frames(puzzle: Puzzle, frames: np.ndarray, *, max_moves: int = 1,
                   min_confidence: float = DEFAULT_MIN_CONFIDENCE) -> FrameReport:
    """Decode and check a (T, H, W, 3) uint8 frame sequence against a puzzle."""
    decoded = decode_frames(frames, puzzle.rows, puzzle.cols, puzzle.active_palette())
    confidence = decoded.frame_confidence
    states: list[Any] = []
    frame_errors: list[str | None] = []
    for t in range(len(frames)):
        if confidence[t] < min_confidence:
            states.append(None)
            frame_errors.append(f"cannot read the board (decoding confidence {confidence[t]:.2f})")
            continue
        state, error = puzzle.frame_state(decoded.classes[t])
        states.append(state)
        frame_errors.append(error)
    initial = puzzle.initial_frame_state()
    first_ok = states[0] == initial
    if not first_ok and frame_errors[0] is None:
        frame_errors[0] = "it differs from the task's starting board"
    transition_errors: list[str | None] = []
    for t in range(1, len(frames)):
        prev, nxt = states[t - 1], states[t]
        if nxt is None:
            transition_errors.append(frame_errors[t])
        elif prev is None:
            transition_errors.append(f"follows an unreadable frame {t - 1}")
        else:
            transition_errors.append(puzzle.frame_transition_error(prev, nxt, max_moves))
    first_illegal = next((t for t in range(1, len(frames)) if transition_errors[t - 1] is not None), None)
    last_legal = states[(first_illegal or len(frames)) - 1] if first_ok else initial
    solved = first_ok and first_illegal is None and puzzle.frame_solved(last_legal)
    parts = puzzle.frame_progress_parts(last_legal) if first_ok else puzzle.frame_progress_parts(initial)
    if not first_ok:
        parts = dict.fromkeys(parts, 0.0)
    prefix = states[: first_illegal or len(frames)] if first_ok else [initial]
    metrics = puzzle.trajectory_metrics(prefix)
    if not first_ok:
        metrics = dict.fromkeys(metrics, 0.0)
    return FrameReport(
        num_frames=len(frames), confidence=confidence, frame_errors=frame_errors,
        transition_errors=transition_errors, first_frame_ok=first_ok, first_illegal_frame=first_illegal,
        progress_parts=parts, solved=solved, metrics=metrics,
    )


def report_verdict(report: FrameReport) -> Verdict:
    parts = report.progress_parts
    progress = sum(parts.values()) / len(parts) if parts else 0.0
    if report.solved:
        progress = 1.0
    components = {
        "solved": float(report.solved),
        "progress": float(progress),
        "legal_transitions": report.legal_fraction,
        "first_frame": float(report.first_frame_ok),
        "decode_confidence": float(report.confidence.mean()),
        "first_illegal_frame": float(-1 if report.first_illegal_frame is None else report.first_illegal_frame),
        "num_frames": float(report.num_frames),
    }
    verdict = FRAME_RUBRIC.combine(components, feedback=report.feedback())
    verdict.components.update({k: float(v) for k, v in {**parts, **report.metrics}.items()})
    return verdict


def check_frames(puzzle: Puzzle, frames: Any) -> tuple[np.ndarray | None, str | None]:
    """(T, H, W, 3) uint8 frames big enough to hold the board (2+ px per cell), or why not."""
    array, error = as_frame_array(frames)
    if array is not None and (array.shape[1] < 2 * puzzle.rows or array.shape[2] < 2 * puzzle.cols):
        return None, f"frames of {array.shape[1]}x{array.shape[2]} are too small for a {puzzle.rows}x{puzzle.cols} board"
    return array, error


def failed_verdict(error: str) -> Verdict:
    """All-zero frame verdict for input that could not be verified at all."""
    verdict = FRAME_RUBRIC.combine(dict.fromkeys(FRAME_RUBRIC.weights, 0.0), feedback=error)
    return verdict.model_copy(update={"error": error})


def verify_frames(task: Task | dict[str, Any], frames: Any, *, max_moves: int | None = None,
                  min_confidence: float | None = None) -> Verdict:
    """Score a frame sequence produced by any model for a puzzle task; never raises on bad frames.

    `frames`: a (T, H, W, 3) uint8 array, a list of (H, W, 3) frames, or a data-URL / bytes of an APNG/GIF.
    """
    task = task if isinstance(task, Task) else Task.model_validate(task)
    puzzle = puzzle_from_task(task)
    if isinstance(frames, (str, bytes)):
        try:
            frames = load_frames(frames, allow_paths=False)
        except Exception as exc:  # unreadable references are a failed verdict, not a crash
            return failed_verdict(f"could not read frames: {exc}")
    array, error = check_frames(puzzle, frames)
    if array is None:
        return failed_verdict(error or "no frames")
    settings = task.metadata.get("frames", {})
    report = analyze_frames(
        puzzle, array,
        max_moves=max_moves if max_moves is not None else int(settings.get("max_moves_per_transition", 1)),
        min_confidence=min_confidence if min_confidence is not None else float(
            settings.get("min_confidence", DEFAULT_MIN_CONFIDENCE)),
    )
    return report_verdict(report)
