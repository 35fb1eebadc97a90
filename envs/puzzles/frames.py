"""Frame-sequence verification (the video path): decode frames to boards one at a time, check the first board,
every transition and the last board, and turn that into decomposed dense rewards.

Everything is decided by trusted code from boards the decoder produced itself: frame 0 must be the task's start,
each change must be a hold or 1..k legal moves, the last legal board must be solved. Progress is measured at the
end of the legal prefix and counts only what was gained over the start, so a solved-looking last frame reached
through an illegal jump earns neither `solved` nor the progress after the jump.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rlvr_gym import Criterion, Rubric, Verdict

from .base import PROGRESS_WEIGHT, SOLVED_WEIGHT, Puzzle, gained
from .decode import Palette, decode_frames
from .media import (
    DEFAULT_LIMITS,
    FrameLimitError,
    FrameLimits,
    Header,
    check_header,
    data_url_payload,
    iter_array_frames,
    iter_image_frames,
    npy_frames,
)

DEFAULT_MIN_CONFIDENCE = 0.1  # a frame whose least certain cell is below this margin is unreadable
_DECODE_ERRORS = (
    FrameLimitError,
    OSError,
    ValueError,
    SyntaxError,
    EOFError,
    struct.error,
    zlib.error,
    MemoryError,
    IndexError,
    KeyError,
    TypeError,
)


@dataclass
class FrameReport:
    """Everything the verifier found, frame by frame (for feedback, debugging and tests)."""

    num_frames: int = 0
    confidence: list[float] = field(default_factory=list)  # least certain cell per frame
    frame_errors: list[str | None] = field(default_factory=list)  # why frame t is not a board of this task
    transition_errors: list[str | None] = field(default_factory=list)  # entry t-1: the change from t-1 to t
    first_frame_ok: bool = False
    first_illegal_frame: int | None = None  # first frame t that is undecodable or reached illegally
    progress: float = 0.0  # progress gained over the start, at the end of the legal prefix
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


FRAME_RUBRIC = Rubric(
    [
        Criterion("solved", lambda report: float(report.solved), SOLVED_WEIGHT),
        Criterion("progress", lambda report: 1.0 if report.solved else report.progress, PROGRESS_WEIGHT),
        Criterion("legal_transitions", lambda report: report.legal_fraction, 0.0),  # a constraint, never a reward
        Criterion("first_frame", lambda report: float(report.first_frame_ok), 0.0),
        Criterion(
            "decode_confidence", lambda report: float(np.mean(report.confidence)) if report.confidence else 0.0, 0.0
        ),
        Criterion(
            "first_illegal_frame",
            lambda report: float(-1 if report.first_illegal_frame is None else report.first_illegal_frame),
            0.0,
        ),
        Criterion("num_frames", lambda report: float(report.num_frames), 0.0),
    ],
    pass_on="solved",
)


CHUNK_PIXELS = 1 << 20  # frames are decoded in chunks of at most 1 Mpx (3 MB): vectorised, still bounded


def decoded_chunks(puzzle: Puzzle, frames: Iterable[np.ndarray]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(classes, confidence) of consecutive chunks of frames; all frames must share frame 0's shape."""
    palette = Palette(puzzle.active_palette())
    chunk: list[np.ndarray] = []
    shape: tuple[int, ...] | None = None
    for t, frame in enumerate(frames):
        if shape is None:
            shape = frame.shape
            if shape[0] < 2 * puzzle.rows or shape[1] < 2 * puzzle.cols:
                raise FrameLimitError(
                    f"frames of {shape[0]}x{shape[1]} are too small for a "
                    f"{puzzle.rows}x{puzzle.cols} board (2 px per cell at least)"
                )
        elif frame.shape != shape:
            raise FrameLimitError(f"frame {t} is {frame.shape}, frame 0 was {shape}")
        chunk.append(frame)
        if (len(chunk) + 1) * shape[0] * shape[1] > CHUNK_PIXELS:
            yield decode_frames(np.stack(chunk), puzzle.rows, puzzle.cols, palette)
            chunk = []
    if chunk:
        yield decode_frames(np.stack(chunk), puzzle.rows, puzzle.cols, palette)


def analyze_frames(
    puzzle: Puzzle, frames: Iterable[np.ndarray], *, max_moves: int = 1, min_confidence: float = DEFAULT_MIN_CONFIDENCE
) -> FrameReport:
    """Decode and check frames (any iterable of (H, W, 3) uint8), holding one chunk of frames at a time."""
    report = FrameReport()
    initial = puzzle.initial_frame_state()
    states: list[Hashable | None] = []
    for chunk_classes, chunk_confidence in decoded_chunks(puzzle, frames):
        for classes, confidence in zip(chunk_classes, chunk_confidence.tolist(), strict=True):
            t = len(states)
            report.confidence.append(confidence)
            state, error = (
                (None, f"cannot read the board (decoding confidence {confidence:.2f})")
                if confidence < min_confidence
                else puzzle.frame_state(classes)
            )
            if t == 0 and state != initial and error is None:
                error = "it differs from the task's starting board"
            if t > 0:
                report.transition_errors.append(_transition_error(puzzle, states[-1], state, error, t, max_moves))
            states.append(state)
            report.frame_errors.append(error)
    if not states:
        raise FrameLimitError("no frames")
    report.num_frames = len(states)
    report.first_frame_ok = states[0] == initial
    report.first_illegal_frame = next(
        (t for t in range(1, len(states)) if report.transition_errors[t - 1] is not None), None
    )
    prefix = states[: report.first_illegal_frame or len(states)] if report.first_frame_ok else [initial]
    last = prefix[-1]
    report.solved = report.first_frame_ok and report.first_illegal_frame is None and puzzle.frame_solved(last)
    report.progress_parts = puzzle.frame_progress_parts(last)
    report.progress = gained(puzzle.frame_progress(last), puzzle.frame_progress(initial))
    report.metrics = (
        puzzle.trajectory_metrics(prefix)
        if report.first_frame_ok
        else dict.fromkeys(puzzle.trajectory_metrics([initial]), 0.0)
    )
    return report


def _transition_error(
    puzzle: Puzzle, prev: Hashable | None, state: Hashable | None, error: str | None, t: int, max_moves: int
) -> str | None:
    if state is None:
        return error
    if prev is None:
        return f"follows an unreadable frame {t - 1}"
    return puzzle.frame_transition_error(prev, state, max_moves)


def report_verdict(report: FrameReport) -> Verdict:
    verdict = FRAME_RUBRIC.score(feedback=report.feedback(), report=report)
    verdict.components.update({k: float(v) for k, v in {**report.progress_parts, **report.metrics}.items()})
    return verdict


def invalid_verdict(error: str) -> Verdict:
    """Frames that could not be read at all: invalid, every component 0."""
    return Verdict.invalid(error, components=dict.fromkeys(FRAME_RUBRIC.weights, 0.0))


# ---- reading whatever the agent sent -----------------------------------------------------------------------------
def read_frames(source: Any, limits: FrameLimits = DEFAULT_LIMITS, allow_paths: bool = False) -> Iterator[np.ndarray]:
    """Frames from an array, a list of frames, image bytes, text holding one data URL, or (opt-in) a file path.

    Sizes and counts are checked before decoding; raises FrameLimitError (lazily, while iterating, for images).
    """
    if isinstance(source, np.ndarray):
        return iter_array_frames(_checked_array(source), limits)
    if isinstance(source, (list, tuple)):
        return _frame_list(source, limits)
    if isinstance(source, (bytes, bytearray)):
        return iter_image_frames(bytes(source), limits)
    if not isinstance(source, str):
        raise FrameLimitError(f"expected frames or a data:image/png;base64,... reference, got {type(source).__name__}")
    payload = data_url_payload(source)
    if payload is not None:
        return iter_image_frames(payload, limits)
    if not allow_paths:
        raise FrameLimitError("expected a frame array or one data:image/png;base64,... (animated PNG/GIF) reference")
    return _file_frames(source, limits)


def _checked_array(frames: np.ndarray) -> np.ndarray:
    if frames.dtype != np.uint8:
        raise FrameLimitError(f"frames must be uint8, got {frames.dtype}")
    if frames.ndim != 4 or frames.shape[-1] != 3 or frames.shape[0] < 1:
        raise FrameLimitError(f"frames must have shape (T, H, W, 3), got {frames.shape}")
    return frames


def _frame_list(frames: list | tuple, limits: FrameLimits) -> Iterator[np.ndarray]:
    if not frames:
        raise FrameLimitError("no frames given")
    first = frames[0]
    if (
        not all(isinstance(f, np.ndarray) and f.dtype == np.uint8 and f.shape == first.shape for f in frames)
        or first.ndim != 3
        or first.shape[-1] != 3
    ):
        raise FrameLimitError("frames must be (H, W, 3) uint8 arrays of one shape")
    check_header(Header("list", first.shape[1], first.shape[0], len(frames)), limits)
    return iter(frames)


def _file_frames(text: str, limits: FrameLimits) -> Iterator[np.ndarray]:
    path = Path(text.strip()[:4096])
    suffix = path.suffix.lower()
    if suffix not in (".png", ".apng", ".gif", ".npy") or not path.is_file():
        raise FrameLimitError(f"not a frame file (.png/.apng/.gif/.npy) or data URL: {text[:80]!r}")
    if suffix == ".npy":
        return iter_array_frames(npy_frames(path, limits), limits)
    if path.stat().st_size > limits.max_bytes:
        raise FrameLimitError(f"{path.name} is over the {limits.max_bytes} byte limit")
    return iter_image_frames(path.read_bytes(), limits)


def guarded(frames: Iterator[np.ndarray]) -> Iterator[np.ndarray]:
    """Any failure while decoding (corrupt data, a broken promise in a header) becomes a FrameLimitError."""
    while True:
        try:
            frame = next(frames)
        except StopIteration:
            return
        except FrameLimitError:
            raise
        except _DECODE_ERRORS as exc:
            raise FrameLimitError(f"could not decode the frames: {type(exc).__name__}: {str(exc)[:120]}") from exc
        yield frame


def verify_frames(
    puzzle: Puzzle,
    source: Any,
    *,
    max_moves: int = 1,
    min_confidence: float = DEFAULT_MIN_CONFIDENCE,
    limits: FrameLimits = DEFAULT_LIMITS,
    allow_paths: bool = False,
) -> Verdict:
    """Score one frame sequence for a puzzle; never raises on bad input (it is an invalid verdict)."""
    try:
        frames = guarded(read_frames(source, limits, allow_paths))
        report = analyze_frames(puzzle, frames, max_moves=max_moves, min_confidence=min_confidence)
    except FrameLimitError as exc:
        return invalid_verdict(f"could not read frames: {exc}")
    return report_verdict(report)
