"""Frames verified per second by the puzzle frame verifier, 256x256 frames against 64x64 frames (the baseline).

For each family a solver trajectory on a board of about 8x8 cells is rendered, resized to 64x64 and 256x256, and
`verify_frames` (decode every frame + check every transition + the verdict) is timed on both in the same run.
Usage: python benchmarks/puzzle_frames.py [--tasks 4] [--min-seconds 0.5]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from PIL import Image

import rlvr_gym
from rlvr_gym.envs.puzzles.frames import verify_frames
from rlvr_gym.envs.puzzles.render import render_moves
from rlvr_gym.envs.puzzles.tasks import puzzle_from_task, task_solution

BOARDS = {"Sokoban": "medium", "Maze": "easy", "FlowFree": "hard"}  # 8x8, 9x9 and 8x8 cells


def _resize(frames: np.ndarray, size: int) -> np.ndarray:
    return np.stack([np.asarray(Image.fromarray(f).resize((size, size), Image.BILINEAR)) for f in frames])


def _frames_per_second(task, frames: np.ndarray, min_seconds: float) -> float:
    puzzle = puzzle_from_task(task)
    done, start = 0, time.perf_counter()
    while True:
        verdict = verify_frames(puzzle, frames)
        assert verdict.passed, verdict.feedback
        done += len(frames)
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            return done / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=4)
    parser.add_argument("--min-seconds", type=float, default=0.5)
    args = parser.parse_args()
    results: dict[str, dict[str, float]] = {}
    for name, difficulty in BOARDS.items():
        env = rlvr_gym.make(f"rlvr/{name}-v0", difficulty=difficulty, seed=0)
        rates = {64: [], 256: []}
        for index in range(args.tasks):
            task = env.get_task(index)
            frames = render_moves(puzzle_from_task(task), task_solution(task))
            for size in rates:
                rates[size].append(_frames_per_second(task, _resize(frames, size), args.min_seconds / args.tasks))
        results[name] = {f"fps_{size}": float(np.mean(r)) for size, r in rates.items()}
        results[name]["ratio_256_vs_64"] = results[name]["fps_256"] / results[name]["fps_64"]
    print(f"{'family':10s} {'64x64 frames/s':>15s} {'256x256 frames/s':>17s} {'256 vs 64':>10s}")
    for name, row in results.items():
        print(f"{name:10s} {row['fps_64']:15.0f} {row['fps_256']:17.0f} {row['ratio_256_vs_64']:9.2f}x")
    overall = float(np.mean([row["ratio_256_vs_64"] for row in results.values()]))
    print(f"256x256 frames verify at {overall:.2f}x the rate of 64x64 frames (16x the pixels)")
    print(
        json.dumps(
            {
                "benchmark": "puzzle_frames",
                "unit": "frames_per_second",
                "baseline": "64x64",
                "ratio_256_vs_64": overall,
                "families": results,
            }
        )
    )


if __name__ == "__main__":
    main()
