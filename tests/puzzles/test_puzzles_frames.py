"""Frame verification: illegal transitions are caught at the right frame; decoding survives noise and resizing."""

from __future__ import annotations

import numpy as np
import pytest

import rlvr_gym
from rlvr_gym.envs.puzzles import frames as frames_module
from rlvr_gym.envs.puzzles.frames import analyze_frames
from rlvr_gym.envs.puzzles.maze import PLAYER
from rlvr_gym.envs.puzzles.render import render_grids, render_moves
from rlvr_gym.envs.puzzles.tasks import puzzle_from_task, task_solution
from rlvr_gym.envs.puzzles.verifier import verify


def _task(name: str, difficulty: str = "medium", index: int = 0, seed: int = 3):
    return rlvr_gym.make(f"rlvr/{name}Frames-v0", difficulty=difficulty, seed=seed).get_task(index)


def verify_frames(task, frames, **settings):
    """The frames verdict: through the family verifier, or with explicit settings through `frames.verify_frames`."""
    if settings:
        return frames_module.verify_frames(puzzle_from_task(task), frames, **settings)
    return verify(task, [frames])


def _grids(task):
    return puzzle_from_task(task).reference_frame_cells(task_solution(task))


def _check_illegal_at(task, grids, bad_index, corrupt=None):
    puzzle = puzzle_from_task(task)
    frames = render_grids(puzzle, grids)
    if corrupt is not None:
        frames = corrupt.jpeg(corrupt.noise(frames, 4.0), quality=75)
    report = analyze_frames(puzzle, frames)
    assert report.first_frame_ok
    assert report.first_illegal_frame == bad_index, report.transition_errors
    verdict = verify_frames(task, frames)
    assert not verdict.passed and verdict.components["solved"] == 0.0
    assert verdict.components["first_illegal_frame"] == bad_index
    assert verdict.reward < 0.1  # no solve: at most the progress weight
    return report


@pytest.mark.parametrize("use_noise", [False, True])
def test_maze_teleport_detected_at_the_jump(use_noise, corrupt):
    task = _task("Maze", "medium")
    grids = _grids(task)
    k = len(grids) // 2
    jumped = grids[:k] + grids[k + 3 :]  # frame k shows the player 4 moves further on
    report = _check_illegal_at(task, jumped, k, corrupt if use_noise else None)
    assert "teleport" in report.transition_errors[k - 1]
    assert puzzle_from_task(task).frame_solved(puzzle_from_task(task).frame_state(jumped[-1])[0])


def test_maze_step_through_wall_detected():
    task = _task("Maze", "medium")
    puzzle = puzzle_from_task(task)
    grids = _grids(task)
    start = puzzle.start
    wall = next(w for w in (start + 1, start + puzzle.cols) if w in puzzle.walls)
    beyond = wall + (wall - start)
    assert beyond not in puzzle.walls
    bad = grids[0].reshape(-1).copy()
    bad[start], bad[beyond] = 2, PLAYER  # the start tile shows again, the player is behind the wall
    _check_illegal_at(task, [grids[0], bad.reshape(grids[0].shape)] + grids[1:], 1)


def _box_through_wall(puzzle, state):
    player, boxes = state
    for box in boxes:
        for delta in puzzle.deltas.values():
            wall, beyond = box + delta, box + 2 * delta
            if (
                wall in puzzle.walls
                and 0 <= beyond < puzzle.rows * puzzle.cols
                and not puzzle.is_wall(beyond)
                and beyond not in boxes
                and beyond != player
            ):
                return (player, (boxes - {box}) | {beyond})
    return None


@pytest.mark.parametrize("use_noise", [False, True])
def test_sokoban_box_pushed_through_wall_detected(use_noise, corrupt):
    for index in range(40):
        task = _task("Sokoban", "medium", index)
        puzzle = puzzle_from_task(task)
        states = [puzzle.initial_state()]
        for move in task_solution(task):
            states.append(puzzle.apply(states[-1], move)[0])
        for k, state in enumerate(states[:-1]):
            bad = _box_through_wall(puzzle, state)
            if bad is not None:
                grids = (
                    [puzzle.cells(s) for s in states[: k + 1]]
                    + [puzzle.cells(bad)]
                    + [puzzle.cells(s) for s in states[k + 1 :]]
                )
                report = _check_illegal_at(task, grids, k + 1, corrupt if use_noise else None)
                assert "box" in report.transition_errors[k]
                return
    pytest.fail("no state with a box next to a thin wall found")


def test_sokoban_teleport_and_jump_to_solved_end_not_solved():
    task = _task("Sokoban", "medium", 1)
    grids = _grids(task)
    k = len(grids) // 2
    report = _check_illegal_at(task, grids[: k + 1] + [grids[-1]], k + 1)
    assert not report.solved
    # progress is measured where the legal prefix ends, not at the (solved-looking) last frame
    honest = analyze_frames(puzzle_from_task(task), render_grids(puzzle_from_task(task), grids[: k + 1]))
    assert report.progress_parts == honest.progress_parts


def _crossing(puzzle, grid):
    flat = grid.reshape(-1)
    for cell, colour in enumerate(flat.tolist()):
        if colour and cell not in puzzle.endpoint_colour:
            for other in puzzle.nbrs[cell]:
                if flat[other] not in (0, colour):
                    crossed = flat.copy()
                    crossed[cell] = flat[other]
                    return crossed.reshape(grid.shape)
    return None


@pytest.mark.parametrize("use_noise", [False, True])
def test_flowfree_crossing_flow_detected(use_noise, corrupt):
    task = _task("FlowFree", "medium")
    puzzle = puzzle_from_task(task)
    grids = _grids(task)
    k = next(k for k in range(len(grids) // 2, len(grids)) if _crossing(puzzle, grids[k]) is not None)
    bad = _crossing(puzzle, grids[k])
    report = _check_illegal_at(task, grids[: k + 1] + [bad] + grids[k + 1 :], k + 1, corrupt if use_noise else None)
    assert "crossing" in report.transition_errors[k]


def test_flowfree_jump_and_branch_detected():
    task = _task("FlowFree", "medium")
    puzzle = puzzle_from_task(task)
    grids = _grids(task)
    final = grids[-1].reshape(-1)
    start = grids[0].reshape(-1)
    far = next(
        c for c in range(len(final)) if start[c] == 0 and all(start[j] != final[c] for j in puzzle.nbrs[c])
    )  # no cell of its colour next to it yet
    early = start.copy()
    early[far] = final[far]
    report = _check_illegal_at(task, [grids[0], early.reshape(grids[0].shape)], 1)
    assert "jump" in report.transition_errors[0]
    # a flow that branches: a second cell next to an endpoint, beside the first one drawn there
    for endpoint, v in ((c, v) for c, v in enumerate(final.tolist()) if c in puzzle.endpoint_colour):
        fresh = [j for j in puzzle.nbrs[endpoint] if start[j] == 0]
        if len(fresh) >= 2:
            branched = start.copy()
            branched[fresh[0]] = branched[fresh[1]] = v
            frames = render_grids(puzzle, [grids[0], branched.reshape(grids[0].shape)])
            report = analyze_frames(puzzle, frames, max_moves=2)
            assert report.first_illegal_frame == 1 and "branches" in report.transition_errors[0]
            return
    pytest.fail("no endpoint with two free neighbours")


@pytest.mark.parametrize("name", ["Sokoban", "Maze", "FlowFree"])
def test_group_moves_allowed_only_up_to_the_limit(name):
    task = _task(name, "medium")
    puzzle = puzzle_from_task(task)
    grids = _grids(task)
    every_other = grids[::2] + ([grids[-1]] if (len(grids) - 1) % 2 else [])
    frames = render_grids(puzzle, every_other)
    assert not verify_frames(task, frames).passed
    assert verify_frames(task, frames, max_moves=2).reward == 1.0
    assert not verify_frames(task, render_grids(puzzle, grids[::3] + [grids[-1]]), max_moves=2).passed


@pytest.mark.parametrize("name", ["Sokoban", "Maze", "FlowFree"])
def test_decoding_survives_resize_blur_shift_noise_jpeg(name, corrupt):
    task = _task(name, "medium", 2)
    frames = render_moves(puzzle_from_task(task), task_solution(task))
    variants = {
        "64": corrupt.resize(frames, (64, 64)),
        "256": corrupt.resize(frames, (256, 256)),
        "256-noise-jpeg": corrupt.jpeg(corrupt.noise(corrupt.resize(frames, (256, 256)), 4.0), 70),
        "blur": corrupt.blur(frames, 1.0),
        "shift": corrupt.shift(frames, (12, -10, 8)),
        "noise8": corrupt.noise(frames, 8.0),
        "jpeg50": corrupt.jpeg(frames, 50),
    }
    for label, variant in variants.items():
        verdict = verify_frames(task, variant)
        assert verdict.reward == 1.0, (label, verdict.feedback)
        assert verdict.components["decode_confidence"] > 0.5, label


def test_repeated_frames_are_holds_and_first_frame_must_match():
    task = _task("Maze", "easy")
    puzzle = puzzle_from_task(task)
    grids = _grids(task)
    held = [grids[0]] * 3 + grids + [grids[-1]] * 2
    assert verify_frames(task, render_grids(puzzle, held)).reward == 1.0
    late_start = verify_frames(task, render_grids(puzzle, grids[1:]))
    assert late_start.reward == 0.0 and late_start.components["first_frame"] == 0.0
    only_start = verify_frames(task, render_grids(puzzle, grids[:1]))
    assert not only_start.passed and only_start.components["legal_transitions"] == 0.0


def test_partial_sequences_get_dense_progress():
    task = _task("Sokoban", "medium", 4)
    puzzle = puzzle_from_task(task)
    grids = _grids(task)
    half = verify_frames(task, render_grids(puzzle, grids[: len(grids) // 2]))
    assert not half.passed and half.components["legal_transitions"] == 1.0
    assert half.reward == pytest.approx(0.1 * half.components["progress"]) and half.reward < 0.1


def test_bad_frame_inputs_never_raise():
    task = _task("Maze", "easy")
    good = render_moves(puzzle_from_task(task), task_solution(task))
    bad_inputs = [
        good.astype(np.float32),
        good[..., :2],
        good[0],
        np.zeros((0, 8, 8, 3), np.uint8),
        [],
        "frames",
        None,
        42,
        [good[0], good[1][:-1]],
        good[:, :3, :3],
    ]
    for bad in bad_inputs:
        verdict = verify_frames(task, bad)
        assert verdict.reward == 0.0 and not verdict.passed and verdict.error and not verdict.valid
    rng = np.random.default_rng(0)
    garbage = rng.integers(0, 256, size=(5, *good.shape[1:]), dtype=np.uint8)
    verdict = verify_frames(task, garbage)
    assert not verdict.passed and verdict.reward == 0.0
    assert verify(task.model_dump(mode="json"), [list(good)]).reward == 1.0  # from JSON, list of frames


def test_non_square_board_resized_to_square_frames_and_text_references(corrupt):
    from rlvr_gym.envs.puzzles.render import png_data_url

    env = rlvr_gym.make("rlvr/SokobanFrames-v0", difficulty="easy", config={"width": 7, "height": 4, "num_boxes": 2})
    task = env.get_task(0)
    puzzle = puzzle_from_task(task)
    assert (puzzle.rows, puzzle.cols) == (6, 9)
    frames = render_moves(puzzle, task_solution(task))
    squashed = corrupt.jpeg(corrupt.resize(frames, (64, 64)), 80)
    assert verify_frames(task, squashed).reward == 1.0
    assert verify_frames(task, png_data_url(frames)).reward == 1.0
    assert verify_frames(task, "data:image/png;base64,!!!!").error
