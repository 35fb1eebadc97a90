"""Frames back to cell grids: per-cell mean colour of the tile centre -> nearest palette entry, with a confidence.

The cell grid comes from the known board size, so any resolution works (a frame resized from 128x128 to 64x64 or
256x256 decodes the same). Only the central part of each cell is averaged, which keeps edges, blur across cell
borders and FlowFree's inset borders out of the mean. Confidence is the nearest-vs-second-nearest margin
(d2 - d1) / d2: 1 on an exact palette colour, 0 halfway between two entries. Fully vectorised over frames.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

CENTRE_MARGIN = 0.25  # fraction of the cell cut off on each side before averaging


@dataclass(frozen=True)
class DecodedFrames:
    classes: np.ndarray  # (T, rows, cols) palette indices
    confidence: np.ndarray  # (T, rows, cols) in [0, 1]

    @property
    def frame_confidence(self) -> np.ndarray:
        """(T,) the least certain cell of each frame."""
        return self.confidence.reshape(len(self.confidence), -1).min(axis=1)


def _centre_bounds(size: int, cells: int, margin: float) -> tuple[np.ndarray, np.ndarray]:
    edges = np.linspace(0.0, size, cells + 1)
    step = size / cells
    lo = np.floor(edges[:-1] + margin * step).astype(np.int64)
    hi = np.ceil(edges[1:] - margin * step).astype(np.int64)
    hi = np.maximum(hi, lo + 1)
    return np.clip(lo, 0, size - 1), np.clip(hi, 1, size)


def _sum_segments(values: np.ndarray, lo: np.ndarray, hi: np.ndarray, axis: int) -> np.ndarray:
    """Sums of values[lo[i]:hi[i]] along `axis`; slicing reads only the central pixels, and int32 sums are far
    faster than int64 (no overflow below 8M pixels per cell)."""
    index = [slice(None)] * values.ndim
    parts = []
    for start, stop in zip(lo.tolist(), hi.tolist(), strict=True):
        index[axis] = slice(start, stop)
        parts.append(values[tuple(index)].sum(axis=axis, dtype=np.int32))
    return np.stack(parts, axis=axis)


def cell_means(frames: np.ndarray, rows: int, cols: int, margin: float = CENTRE_MARGIN) -> np.ndarray:
    """(T, rows, cols, 3) mean colour of each cell's central region."""
    _, h, w, _ = frames.shape
    y0, y1 = _centre_bounds(h, rows, margin)
    x0, x1 = _centre_bounds(w, cols, margin)
    total = _sum_segments(_sum_segments(frames, y0, y1, axis=1), x0, x1, axis=2)
    area = ((y1 - y0)[:, None] * (x1 - x0)[None, :])[None, :, :, None]
    return total / area


def decode_frames(frames: np.ndarray, rows: int, cols: int, palette: np.ndarray) -> DecodedFrames:
    """Nearest palette entry of every cell of every frame, with margin confidence."""
    means = cell_means(frames, rows, cols)
    diff = means[..., None, :] - palette.astype(np.float64)[None, None, None, :, :]
    dist = np.sqrt(np.einsum("trckx,trckx->trck", diff, diff))
    classes = dist.argmin(axis=-1)
    if len(palette) < 2:
        return DecodedFrames(classes, np.ones(classes.shape))
    two = np.partition(dist, 1, axis=-1)
    d1, d2 = two[..., 0], two[..., 1]
    confidence = np.clip((d2 - d1) / np.maximum(d2, 1e-9), 0.0, 1.0)
    return DecodedFrames(classes, confidence)
