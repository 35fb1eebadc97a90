"""Frame recognition under the corruptions a video model's output shows, and wrong videos that must never pass.

Sets (per puzzle): 30 solver videos (difficulty 1, 2, 3 in turn; FlowFree 2, 3, 4, whose level 4 has the most
colours; 16 px tiles, so 8 px cells after downscaling) under each corruption: downscale
x0.5, Gaussian noise sigma 8, JPEG quality 40, Gaussian blur radius 1, and all of half + noise + JPEG 40 at once.
Bar: at most 1 false negative in 30 per puzzle and corruption. False positives: 6 tasks per puzzle, every wrong
video of `verifier.wrong_frame_grids` (truncated, skipped frame, tampered cell, jump to the solved board, another
instance, reversed) under every corruption and clean: none may pass.
"""

from __future__ import annotations

import random

import pytest

import rlvr_gym
from rlvr_gym.envs.puzzles.frames import verify_frames
from rlvr_gym.envs.puzzles.render import render_grids, render_moves
from rlvr_gym.envs.puzzles.tasks import puzzle_from_task, task_solution
from rlvr_gym.envs.puzzles.verifier import wrong_frame_grids

PUZZLES = ("Sokoban", "Maze", "FlowFree")
ITEMS = 30
FP_ITEMS = 6
LEVELS = {"Sokoban": (1, 2, 3), "Maze": (1, 2, 3), "FlowFree": (2, 3, 4)}


def _corruptions(corrupt) -> dict:
    def half(frames):
        return corrupt.resize(frames, (frames.shape[2] // 2, frames.shape[1] // 2))

    return {
        "half": half,
        "noise8": lambda f: corrupt.noise(f, 8.0),
        "jpeg40": lambda f: corrupt.jpeg(f, 40),
        "blur1": lambda f: corrupt.blur(f, 1.0),
        "half+noise8+jpeg40": lambda f: corrupt.jpeg(corrupt.noise(half(f), 8.0), 40),
    }


def _tasks(name: str, count: int) -> list:
    levels = LEVELS[name]
    envs = {level: rlvr_gym.make(f"rlvr/{name}Frames-v0", difficulty=level, seed=21) for level in levels}
    return [envs[levels[i % len(levels)]].get_task(i) for i in range(count)]


@pytest.mark.parametrize("name", PUZZLES)
def test_correct_videos_survive_corruption(name, corrupt):
    failures = {}
    for task in _tasks(name, ITEMS):
        puzzle = puzzle_from_task(task)
        frames = render_moves(puzzle, task_solution(task))
        for label, apply in _corruptions(corrupt).items():
            verdict = verify_frames(puzzle, apply(frames))
            if not verdict.passed:
                failures.setdefault(label, []).append(f"{task.id}: {verdict.feedback}")
    print(
        f"\n{name} false negatives per {ITEMS}: "
        + ", ".join(f"{label} {len(failures.get(label, []))}" for label in _corruptions(corrupt))
    )
    assert all(len(v) <= ITEMS // 30 for v in failures.values()), failures


@pytest.mark.parametrize("name", PUZZLES)
def test_wrong_videos_never_pass_even_corrupted(name, corrupt):
    corruptions = {"clean": lambda f: f, **_corruptions(corrupt)}
    checked, passed = 0, []
    for task in _tasks(name, FP_ITEMS):
        puzzle = puzzle_from_task(task)
        for kind, grids in wrong_frame_grids(task, random.Random(task.id)).items():
            frames = render_grids(puzzle, grids)
            for label, apply in corruptions.items():
                checked += 1
                if verify_frames(puzzle, apply(frames)).passed:
                    passed.append((task.id, kind, label))
    print(f"\n{name}: {len(passed)} of {checked} corrupted wrong videos passed")
    assert checked >= FP_ITEMS * 5 * len(corruptions) and not passed, passed
