"""RGB frames of puzzle states and animated PNG/GIF export.

Every cell is one flat tile of its palette colour, nothing else: the simplest picture for a video model to draw,
and the one that survives downscaling and JPEG best (FlowFree once drew path cells inset on the dark background;
after downscale + JPEG 40 the dark seam bled into the cell colour and red was read as maroon). Animations are
animated PNG (lossless) or GIF (exact for these few flat colours). Reading frames back is `frames.read_frames`.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Iterable
from pathlib import Path

import numpy as np
from PIL import Image

from .base import Puzzle

DEFAULT_TILE = 16


def render_cells(cells: np.ndarray, palette: np.ndarray, tile: int = DEFAULT_TILE) -> np.ndarray:
    """(rows*tile, cols*tile, 3) uint8 image of a grid of palette indices."""
    return np.repeat(np.repeat(palette[cells], tile, axis=0), tile, axis=1)


def render_grids(puzzle: Puzzle, grids: Iterable[np.ndarray], tile: int = DEFAULT_TILE) -> np.ndarray:
    """(T, H, W, 3) uint8 frames of a sequence of cell grids."""
    return np.stack([render_cells(g, puzzle.palette, tile) for g in grids])


def render_state(puzzle: Puzzle, state, tile: int = DEFAULT_TILE) -> np.ndarray:
    return render_grids(puzzle, [puzzle.cells(state)], tile)[0]


def render_moves(puzzle: Puzzle, moves: Iterable, tile: int = DEFAULT_TILE) -> np.ndarray:
    """Frames of a move sequence being played from the initial state (first frame = the task)."""
    return render_grids(puzzle, puzzle.reference_frame_cells(moves), tile)


# ---- export ------------------------------------------------------------------------------------------------------
def _encode(frames: np.ndarray, fmt: str, fps: float) -> bytes:
    images = [Image.fromarray(np.ascontiguousarray(f)) for f in frames]
    buffer = io.BytesIO()
    duration = max(1, round(1000 / fps))
    if len(images) == 1:
        images[0].save(buffer, format=fmt)
    else:
        images[0].save(buffer, format=fmt, save_all=True, append_images=images[1:], duration=duration, loop=0)
    return buffer.getvalue()


def save_animation(frames: np.ndarray, path: str | Path, fps: float = 4.0) -> Path:
    """Write frames as an animated PNG (`.png`/`.apng`) or GIF (`.gif`) for people to look at."""
    path = Path(path)
    fmt = "GIF" if path.suffix.lower() == ".gif" else "PNG"
    path.write_bytes(_encode(np.asarray(frames, dtype=np.uint8), fmt, fps))
    return path


def png_data_url(frames: np.ndarray, fps: float = 4.0) -> str:
    """A frame (H,W,3) or sequence (T,H,W,3) as a PNG / animated PNG data URL."""
    frames = np.asarray(frames, dtype=np.uint8)
    if frames.ndim == 3:
        frames = frames[None]
    return "data:image/png;base64," + base64.b64encode(_encode(frames, "PNG", fps)).decode("ascii")
