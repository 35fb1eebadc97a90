"""Frame sequences read safely: sizes and frame counts come from the container headers before any pixel is decoded.

A small animated PNG or GIF can declare thousands of huge frames (flat colours compress ~1000x, so a 650 KB file
once decoded to 1.3 GB). So every source goes through the same gate: the PNG chunks (IHDR, acTL, fcTL), the GIF
blocks (logical screen, image descriptors) or the .npy header are walked first and checked against `FrameLimits`;
only then are frames decoded, one at a time, with the pixel budget enforced again while decoding. Callers get an
iterator, so at most one decoded frame is held at once.
"""

from __future__ import annotations

import base64
import binascii
import io
import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

DATA_URL_PREFIXES = ("data:image/png;base64,", "data:image/apng;base64,", "data:image/gif;base64,")
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/=\s]*")  # one greedy class from a fixed start: linear


class FrameLimitError(ValueError):
    """The frames are unreadable or exceed a hard cap (raised before the offending pixels are decoded)."""


@dataclass(frozen=True)
class FrameLimits:
    """Hard caps for one action. The defaults fit 512 frames of 256x256 (a 16x16 board at 16 px a cell)."""

    max_frames: int = 512
    max_side: int = 2048  # pixels per frame side
    max_pixels: int = 1 << 25  # pixels over all frames (32 Mpx: ~0.1 GB if it were ever held at once)
    max_bytes: int = 16 << 20  # encoded size of one animation


DEFAULT_LIMITS = FrameLimits()


@dataclass(frozen=True)
class Header:
    """What a container says about itself: canvas size and frame count."""

    kind: str
    width: int
    height: int
    frames: int


def check_header(header: Header, limits: FrameLimits) -> Header:
    if header.frames < 1 or header.width < 1 or header.height < 1:
        raise FrameLimitError(f"{header.kind} declares {header.frames} frame(s) of {header.width}x{header.height}")
    if header.frames > limits.max_frames:
        raise FrameLimitError(f"{header.frames} frames is more than the limit of {limits.max_frames}")
    if max(header.width, header.height) > limits.max_side:
        raise FrameLimitError(f"frames of {header.width}x{header.height} exceed the {limits.max_side} px side limit")
    if header.frames * header.width * header.height > limits.max_pixels:
        raise FrameLimitError(
            f"{header.frames} frames of {header.width}x{header.height} exceed the budget of {limits.max_pixels} pixels"
        )
    return header


# ---- headers -----------------------------------------------------------------------------------------------------
def png_header(data: bytes) -> Header:
    """Walk the PNG chunks: IHDR gives the canvas, acTL the declared frame count, fcTL the real one (and sizes)."""
    if not data.startswith(_PNG_SIGNATURE):
        raise FrameLimitError("not a PNG")
    pos, width, height, declared, controls = 8, 0, 0, 1, 0
    while pos + 8 <= len(data):
        (length,) = struct.unpack_from(">I", data, pos)
        kind = data[pos + 4 : pos + 8]
        body = pos + 8
        if body + length > len(data):
            raise FrameLimitError("truncated PNG chunk")
        if kind == b"IHDR" and length >= 8:
            width, height = struct.unpack_from(">II", data, body)
        elif kind == b"acTL" and length >= 4:
            (declared,) = struct.unpack_from(">I", data, body)
        elif kind == b"fcTL" and length >= 20:
            controls += 1
            w, h, x, y = struct.unpack_from(">IIII", data, body + 4)
            if x + w > width or y + h > height:
                raise FrameLimitError("an APNG frame lies outside the canvas")
        elif kind == b"IEND":
            break
        pos = body + length + 4
    return Header("PNG", width, height, max(declared, controls, 1))


def gif_header(data: bytes) -> Header:
    """Walk the GIF blocks: the logical screen gives the canvas, each image descriptor one frame."""
    if data[:6] not in (b"GIF87a", b"GIF89a") or len(data) < 13:
        raise FrameLimitError("not a GIF")
    width, height, packed = struct.unpack_from("<HHB", data, 6)
    pos = 13 + (3 << ((packed & 7) + 1) if packed & 0x80 else 0)
    frames = 0
    while pos < len(data):
        block = data[pos]
        if block == 0x3B:  # trailer
            break
        if block == 0x21:  # extension: label, then sub-blocks
            pos = _skip_sub_blocks(data, pos + 2)
        elif block == 0x2C:  # image descriptor
            if pos + 10 > len(data):
                raise FrameLimitError("truncated GIF image descriptor")
            x, y, w, h, flags = struct.unpack_from("<HHHHB", data, pos + 1)
            width, height = max(width, x + w), max(height, y + h)  # a frame may grow the canvas when decoded
            pos += 10 + (3 << ((flags & 7) + 1) if flags & 0x80 else 0)
            pos = _skip_sub_blocks(data, pos + 1)  # after the LZW minimum code size
            frames += 1
        else:
            raise FrameLimitError(f"unknown GIF block 0x{block:02x}")
    return Header("GIF", width, height, frames)


def _skip_sub_blocks(data: bytes, pos: int) -> int:
    while pos < len(data) and data[pos]:
        pos += data[pos] + 1
    return pos + 1


def image_header(data: bytes) -> Header:
    if data.startswith(_PNG_SIGNATURE):
        return png_header(data)
    if data[:3] == b"GIF":
        return gif_header(data)
    raise FrameLimitError("not a PNG/APNG or GIF image")


# ---- decoding ----------------------------------------------------------------------------------------------------
def iter_image_frames(data: bytes, limits: FrameLimits = DEFAULT_LIMITS) -> Iterator[np.ndarray]:
    """Frames of a PNG/APNG/GIF as (H, W, 3) uint8, decoded lazily after the header passed the caps."""
    if len(data) > limits.max_bytes:
        raise FrameLimitError(f"an animation of {len(data)} bytes is over the {limits.max_bytes} byte limit")
    header = check_header(image_header(data), limits)
    budget = header.frames * header.width * header.height
    with Image.open(io.BytesIO(data)) as image:
        count = int(getattr(image, "n_frames", 1))
        if count > header.frames:
            raise FrameLimitError(f"the decoder sees {count} frames, the header {header.frames}")
        for index in range(count):
            image.seek(index)
            w, h = image.size
            budget -= w * h
            if budget < 0 or max(w, h) > limits.max_side:
                raise FrameLimitError("a frame is larger than its header declared")
            yield np.asarray(image.convert("RGB"))


def iter_array_frames(frames: np.ndarray, limits: FrameLimits = DEFAULT_LIMITS) -> Iterator[np.ndarray]:
    """Frames of an in-memory (T, H, W, 3) uint8 array, after the same caps as a file."""
    check_header(Header("array", frames.shape[2], frames.shape[1], frames.shape[0]), limits)
    yield from frames


def npy_frames(path: Path, limits: FrameLimits) -> np.ndarray:
    """A .npy frame file, memory-mapped after its header passed the caps (nothing is read before that)."""
    with path.open("rb") as handle:
        major, _ = np.lib.format.read_magic(handle)
        read = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
        shape, _, dtype = read(handle)
    if dtype != np.uint8 or len(shape) != 4 or shape[-1] != 3:
        raise FrameLimitError(f"a .npy frame file must hold (T, H, W, 3) uint8, not {shape} {dtype}")
    check_header(Header("npy", shape[2], shape[1], shape[0]), limits)
    return np.load(path, mmap_mode="r", allow_pickle=False)


def data_url_payload(text: str) -> bytes | None:
    """The bytes of the one image data URL in `text`; None when there is none. Linear time, no regex.

    Two or more data URLs are refused: an answer commits to one video, never to several candidates at once.
    """
    found = [(text.find(prefix), prefix) for prefix in DATA_URL_PREFIXES]
    found = [(at, prefix) for at, prefix in found if at >= 0]
    if not found:
        return None
    if text.count("data:image/") > 1:
        raise FrameLimitError("more than one image in the answer: send exactly one video")
    start, prefix = min(found)
    body = start + len(prefix)
    run = _BASE64_RUN.match(text, body)
    encoded = "".join(run.group(0).split()) if run else ""
    try:
        return base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise FrameLimitError(f"the data URL is not valid base64: {exc}") from exc
