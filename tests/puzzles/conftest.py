"""Frame corruptions a real video model's output would show: noise, JPEG, blur, colour shift, resizing."""

from __future__ import annotations

import io
from types import SimpleNamespace

import numpy as np
import pytest
from PIL import Image, ImageFilter


def _noise(frames: np.ndarray, sigma: float, seed: int = 0) -> np.ndarray:
    """Additive Gaussian noise; frame t takes rows t..t+H of one taller noise field (cheap, still differs per frame)."""
    t, h, w, c = frames.shape
    rng = np.random.default_rng(seed)
    field = np.rint(rng.standard_normal((h + t, w, c), dtype=np.float32) * np.float32(sigma)).astype(np.int16)
    windows = np.lib.stride_tricks.sliding_window_view(field, h, axis=0)[:t]  # (t, w, c, h)
    noisy = frames.astype(np.int16) + np.moveaxis(windows, -1, 1)
    return np.clip(noisy, 0, 255).astype(np.uint8)


def _jpeg(frames: np.ndarray, quality: int = 75) -> np.ndarray:
    out = []
    for frame in frames:
        buffer = io.BytesIO()
        Image.fromarray(frame).save(buffer, "JPEG", quality=quality)
        out.append(np.asarray(Image.open(buffer).convert("RGB")))
    return np.stack(out)


def _resize(frames: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    return np.stack([np.asarray(Image.fromarray(f).resize(size, Image.BILINEAR)) for f in frames])


def _blur(frames: np.ndarray, radius: float = 1.0) -> np.ndarray:
    return np.stack([np.asarray(Image.fromarray(f).filter(ImageFilter.GaussianBlur(radius))) for f in frames])


def _shift(frames: np.ndarray, delta: tuple[int, int, int]) -> np.ndarray:
    return np.clip(frames.astype(np.int64) + np.array(delta), 0, 255).astype(np.uint8)


@pytest.fixture
def corrupt() -> SimpleNamespace:
    return SimpleNamespace(noise=_noise, jpeg=_jpeg, resize=_resize, blur=_blur, shift=_shift)
