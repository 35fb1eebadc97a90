"""RGB frames of puzzle states, animated PNG/GIF export and loading frame sequences back from text references.

Every cell is a flat tile of its palette colour (cells with `full_mask` False - FlowFree's drawn path cells - are
inset on the background colour so endpoints stand out); the tile centre always carries the cell's colour, which is
what the decoder samples. Animations are animated PNG (lossless) or GIF (exact for these few flat colours).
"""

from __future__ import annotations

import base64
import io
import re
from collections.abc import Iterable
from pathlib import Path

import numpy as np
from PIL import Image, ImageSequence

from .base import Puzzle

DEFAULT_TILE = 16
_DATA_URL = re.compile(r"data:image/(?:png|apng|gif);base64,([A-Za-z0-9+/=\s]+)")


def render_cells(cells: np.ndarray, palette: np.ndarray, tile: int = DEFAULT_TILE,
                 full_mask: np.ndarray | None = None, background: int = 0) -> np.ndarray:
    """(rows*tile, cols*tile, 3) uint8 image of a grid of palette indices."""
    image = np.repeat(np.repeat(palette[cells], tile, axis=0), tile, axis=1)
    if full_mask is not None and not full_mask.all():
        inset = max(1, tile // 6)
        pos = np.arange(tile)
        edge = (pos < inset) | (pos >= tile - inset)
        border = np.tile(edge, cells.shape[0])[:, None] | np.tile(edge, cells.shape[1])[None, :]
        inset_cells = np.repeat(np.repeat(~full_mask, tile, axis=0), tile, axis=1)
        image[border & inset_cells] = palette[background]
    return image


def render_grids(puzzle: Puzzle, grids: Iterable[np.ndarray], tile: int = DEFAULT_TILE) -> np.ndarray:
    """(T, H, W, 3) uint8 frames of a sequence of cell grids."""
    frames = [render_cells(g, puzzle.palette, tile, puzzle.full_mask(g), puzzle.background_class) for g in grids]
    return np.stack(frames)


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


# ---- loading -----------------------------------------------------------------------------------------------------
def decode_image_bytes(data: bytes, max_frames: int = 4096) -> np.ndarray:
    """The frames of a PNG/APNG/GIF as (T, H, W, 3) uint8 (at most `max_frames + 1`, so callers see the excess)."""
    frames = []
    with Image.open(io.BytesIO(data)) as image:
        for frame in ImageSequence.Iterator(image):
            frames.append(np.asarray(frame.convert("RGB")))
            if len(frames) > max_frames:
                break
    return np.stack(frames)


def load_frames(source: str | Path | bytes, allow_paths: bool = True, max_frames: int = 4096) -> np.ndarray:
    """Frames from a data URL (anywhere in the text), raw image bytes, or a .png/.gif/.npy/.npz file path."""
    if isinstance(source, bytes):
        return decode_image_bytes(source, max_frames)
    text = str(source)
    match = _DATA_URL.search(text)
    if match:
        return decode_image_bytes(base64.b64decode(re.sub(r"\s+", "", match.group(1))), max_frames)
    if not allow_paths:
        raise ValueError("expected a frame array or a data:image/png;base64,... (animated PNG/GIF) reference")
    path = Path(text.strip())
    suffix = path.suffix.lower()
    if suffix not in (".png", ".apng", ".gif", ".npy", ".npz") or not path.is_file():
        raise ValueError(f"not a frame file (.png/.apng/.gif/.npy/.npz) or data URL: {text[:80]!r}")
    if suffix == ".npy":
        return np.load(path, allow_pickle=False)
    if suffix == ".npz":
        with np.load(path, allow_pickle=False) as archive:
            return archive[archive.files[0]]
    return decode_image_bytes(path.read_bytes(), max_frames)


def as_frame_array(frames: object) -> tuple[np.ndarray | None, str | None]:
    """Validate a model's frame output: (T, H, W, 3) uint8 (a list of (H, W, 3) frames is stacked)."""
    if isinstance(frames, (list, tuple)):
        if not frames:
            return None, "no frames given"
        if not all(isinstance(f, np.ndarray) for f in frames):
            return None, "frames must be numpy arrays"
        shapes = {f.shape for f in frames}
        if len(shapes) != 1:
            return None, f"frames have different shapes: {sorted(shapes)[:3]}"
        frames = np.stack(frames)  # type: ignore[arg-type]
    if not isinstance(frames, np.ndarray):
        return None, f"expected a (T, H, W, 3) uint8 array, got {type(frames).__name__}"
    if frames.dtype != np.uint8:
        return None, f"frames must be uint8, got {frames.dtype}"
    if frames.ndim != 4 or frames.shape[-1] != 3 or frames.shape[0] < 1:
        return None, f"frames must have shape (T, H, W, 3), got {frames.shape}"
    return frames, None

