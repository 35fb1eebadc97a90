"""One frame back to a cell grid: robust colour of each cell centre -> nearest palette entry, with a confidence.

Why each choice:
- The grid comes from the known board size (the board fills the frame), so any resolution works.
- Each cell is read from a lattice of up to 4x4 points inside its central half: edges, blur across cell borders
  and resampling seams stay out. The per-channel median of those points ignores JPEG ringing and noise outliers.
- Colours are compared in a luma-weighted YCbCr space: JPEG keeps luma at full resolution but subsamples and
  quantises chroma, so chroma differences count half. This is what separates e.g. red from maroon after
  downscaling + JPEG 40, where plain RGB distance mixes them up.
- Confidence is the nearest-vs-second-nearest margin (d2 - d1) / d2: 1 on an exact palette colour, 0 halfway.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

CENTRE = 0.5  # the central fraction of a cell that is sampled
MAX_SAMPLES = 4  # lattice points per cell side (16 per cell: the median of 16 is robust enough)
_YCBCR = np.array([[0.299, 0.587, 0.114], [-0.168736, -0.331264, 0.5], [0.5, -0.418688, -0.081312]])
_WEIGHTS = np.array([1.0, 0.5, 0.5])  # luma, chroma blue, chroma red


def perceptual(rgb: np.ndarray) -> np.ndarray:
    """RGB (..., 3) -> luma-weighted YCbCr, the space palette distances are measured in."""
    return (np.asarray(rgb, dtype=np.float64) @ _YCBCR.T) * _WEIGHTS


@lru_cache(maxsize=64)
def sample_lattice(size: int, cells: int) -> np.ndarray:
    """(cells, k) pixel coordinates of k evenly spaced points in the central half of each cell along one axis."""
    step = size / cells
    k = int(min(MAX_SAMPLES, max(1, round(CENTRE * step))))
    offsets = (1.0 - CENTRE) / 2 + CENTRE * (np.arange(k) + 0.5) / k
    points = (np.arange(cells)[:, None] + offsets[None, :]) * step
    return np.clip(np.floor(points).astype(np.int64), 0, size - 1)


def cell_colours(frames: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """(T, rows, cols, 3) robust colour (per-channel median over the centre lattice) of each cell of each frame."""
    ys = sample_lattice(frames.shape[1], rows)
    xs = sample_lattice(frames.shape[2], cols)
    patch = frames[:, ys.reshape(-1)[:, None], xs.reshape(-1)[None, :]]  # (T, rows*ky, cols*kx, 3)
    patch = patch.reshape(len(frames), rows, ys.shape[1], cols, xs.shape[1], 3).transpose(0, 1, 3, 2, 4, 5)
    return np.median(patch.reshape(len(frames), rows, cols, -1, 3), axis=3)


class Palette:
    """A palette with its perceptual coordinates computed once (the decoder compares every cell against it)."""

    def __init__(self, colours: np.ndarray) -> None:
        self.colours = np.asarray(colours)
        self.points = perceptual(self.colours)

    def __len__(self) -> int:
        return len(self.colours)


def classify(colours: np.ndarray, palette: Palette) -> tuple[np.ndarray, np.ndarray]:
    """Nearest palette entry (perceptual distance) of each colour, and the margin confidence."""
    diff = perceptual(colours)[..., None, :] - palette.points
    dist = np.sqrt(np.einsum("...kx,...kx->...k", diff, diff))
    classes = dist.argmin(axis=-1)
    if len(palette) < 2:
        return classes, np.ones(classes.shape)
    two = np.partition(dist, 1, axis=-1)
    d1, d2 = two[..., 0], two[..., 1]
    return classes, np.clip((d2 - d1) / np.maximum(d2, 1e-9), 0.0, 1.0)


def decode_frames(frames: np.ndarray, rows: int, cols: int, palette: Palette) -> tuple[np.ndarray, np.ndarray]:
    """(T, rows, cols) palette indices of (T, H, W, 3) frames, and (T,) the confidence of each least certain cell."""
    classes, confidence = classify(cell_colours(frames, rows, cols), palette)
    return classes, confidence.reshape(len(frames), -1).min(axis=1)
