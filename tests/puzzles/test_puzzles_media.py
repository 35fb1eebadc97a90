"""Frame containers are checked from their headers before decoding, and decoded lazily within a pixel budget."""

from __future__ import annotations

import base64
import struct
import time
import tracemalloc
import zlib

import numpy as np
import pytest

import rlvr_gym
from rlvr_gym.envs.puzzles.frames import read_frames, verify_frames
from rlvr_gym.envs.puzzles.media import FrameLimitError, FrameLimits, gif_header, png_header
from rlvr_gym.envs.puzzles.render import png_data_url, render_moves
from rlvr_gym.envs.puzzles.tasks import puzzle_from_task, task_solution


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def hand_made_apng(width: int, height: int, frames: int, declared: int | None = None) -> bytes:
    """A valid APNG of flat black frames, built chunk by chunk (the compressed frame is shared, so it is tiny)."""
    raw = zlib.compress(b"".join(b"\x00" + bytes(3 * width) for _ in range(height)), 9)
    out = b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
    out += _chunk(b"acTL", struct.pack(">II", frames if declared is None else declared, 0))
    sequence = 0
    for i in range(frames):
        out += _chunk(b"fcTL", struct.pack(">IIIIIHHBB", sequence, width, height, 0, 0, 1, 4, 0, 0))
        sequence += 1
        if i == 0:
            out += _chunk(b"IDAT", raw)
        else:
            out += _chunk(b"fdAT", struct.pack(">I", sequence) + raw)
            sequence += 1
    return out + _chunk(b"IEND", b"")


def _url(data: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(data).decode()


def _task():
    return rlvr_gym.make("rlvr/MazeFrames-v0", difficulty=2).get_task(0)


def test_hand_made_apng_is_a_real_animation():
    frames = list(read_frames(hand_made_apng(32, 24, 3)))
    assert len(frames) == 3 and frames[0].shape == (24, 32, 3) and not frames[2].any()


def test_decompression_bomb_is_refused_from_the_header_without_decoding():
    bomb = hand_made_apng(1024, 1024, 400)  # ~1.2 GB of RGB once decoded, well under 1 MB as a file
    assert len(bomb) < 1_500_000
    header = png_header(bomb)
    assert (header.width, header.height, header.frames) == (1024, 1024, 400)
    puzzle, url = puzzle_from_task(_task()), _url(bomb)
    start = time.perf_counter()
    verdict = verify_frames(puzzle, url)
    assert time.perf_counter() - start < 1.0
    assert not verdict.valid and "budget" in verdict.error
    tracemalloc.start()
    verify_frames(puzzle, url)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 8 * len(url)  # only the text and its base64 decode, never the pixels


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (hand_made_apng(16, 16, 600), "more than the limit"),  # too many frames
        (hand_made_apng(16, 16, 600, declared=1), "more than the limit"),  # acTL lies: fcTL chunks are counted
        (hand_made_apng(4096, 8, 1), "side limit"),
    ],
)
def test_header_caps(data, words):
    with pytest.raises(FrameLimitError, match=words):
        next(read_frames(data))


def test_gif_header_walk_and_caps():
    from PIL import Image

    images = [Image.new("RGB", (40, 30), (i * 40, 0, 0)) for i in range(5)]
    import io

    buffer = io.BytesIO()
    images[0].save(buffer, "GIF", save_all=True, append_images=images[1:], duration=100)
    header = gif_header(buffer.getvalue())
    assert (header.width, header.height, header.frames) == (40, 30, 5)
    assert len(list(read_frames(buffer.getvalue()))) == 5
    with pytest.raises(FrameLimitError, match="more than the limit"):
        next(read_frames(buffer.getvalue(), FrameLimits(max_frames=4)))
    huge = b"GIF89a" + struct.pack("<HHBBB", 65535, 65535, 0, 0, 0) + b";"
    with pytest.raises(FrameLimitError):
        next(read_frames(huge))


def test_frames_are_decoded_one_at_a_time():
    task = rlvr_gym.make("rlvr/MazeFrames-v0", difficulty=4).get_task(1)
    puzzle = puzzle_from_task(task)
    frames = render_moves(puzzle, task_solution(task))
    url = png_data_url(frames)
    stacked = frames.nbytes
    tracemalloc.start()
    verdict = verify_frames(puzzle, url)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert verdict.passed
    assert peak < len(url) * 4 + stacked / 3, (peak, stacked)  # far less than holding every decoded frame


def test_arrays_and_lists_obey_the_same_caps():
    small = np.zeros((600, 8, 8, 3), np.uint8)
    with pytest.raises(FrameLimitError, match="more than the limit"):
        next(read_frames(small))
    with pytest.raises(FrameLimitError, match="budget"):
        next(read_frames([np.zeros((2048, 2048, 3), np.uint8)] * 9))


def test_two_videos_in_one_answer_are_refused():
    task = _task()
    url = task.reference_actions[0]
    from rlvr_gym.envs.puzzles.verifier import verify

    assert verify(task, [url]).passed
    for hedge in (f"{url}\n{url}", f"first try {url} or maybe data:image/gif;base64,R0lGOD"):
        verdict = verify(task, [hedge])
        assert not verdict.valid and "more than one image" in verdict.error
