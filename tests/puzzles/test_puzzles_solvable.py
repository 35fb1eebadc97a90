"""Every generated puzzle is solvable: the solver's reference scores 1.0 as text and as (noisy, JPEG'd) frames."""

from __future__ import annotations

import pytest

import rlvr_gym
from rlvr_gym.envs.puzzles.flowfree_gen import solve_flowfree
from rlvr_gym.envs.puzzles.frames import verify_frames
from rlvr_gym.envs.puzzles.render import render_moves
from rlvr_gym.envs.puzzles.sokoban_gen import count_pushes, solve_sokoban
from rlvr_gym.envs.puzzles.tasks import puzzle_from_task, task_solution

# 150 per family across difficulties 1..4 (hard boards are the slow ones, so fewer of them by default); the
# slow-marked sweep below checks 120 more per family at level 4
SWEEP = {1: 30, 2: 45, 3: 45, 4: 30}
FAMILIES = ("Sokoban", "Maze", "FlowFree")


def _sweep(name: str, counts: dict[int, int], corrupt, corrupt_every: int = 3) -> int:
    checked = 0
    for difficulty, count in counts.items():
        text_env = rlvr_gym.make(f"rlvr/{name}-v0", difficulty=difficulty, seed=7)
        frames_env = rlvr_gym.make(f"rlvr/{name}Frames-v0", difficulty=difficulty, seed=7, tile_size=8)
        for index in range(count):
            text_env.reset(options={"task_index": index})
            task = text_env.task
            *_, terminated, _, info = text_env.step(task.reference_actions[0])
            assert terminated and info["verdict"].reward == 1.0, (task.id, info["verdict"])
            assert info["verdict"].components["steps_over_optimal"] == 0.0

            frames_env.reset(options={"task_index": index})
            *_, terminated, _, info = frames_env.step(frames_env.task.reference_actions[0])
            assert terminated and info["verdict"].reward == 1.0, (task.id, info["verdict"].feedback)

            if index % corrupt_every == 0:
                puzzle = puzzle_from_task(task)
                frames = render_moves(puzzle, task_solution(task), 12)
                noisy = corrupt.jpeg(corrupt.noise(frames, 4.0, seed=index), quality=75)
                verdict = verify_frames(puzzle, noisy)
                assert verdict.reward == 1.0 and verdict.passed, (task.id, verdict.feedback)
            checked += 1
    return checked


@pytest.mark.parametrize("name", FAMILIES)
def test_generated_puzzles_all_solvable(name, corrupt):
    assert _sweep(name, SWEEP, corrupt) == 150


@pytest.mark.heavy  # 120 hard puzzles per family (~20-30 s each); the 150-puzzle sweep above runs by default
@pytest.mark.parametrize("name", FAMILIES)
def test_big_sweep_hard(name, corrupt):
    assert _sweep(name, {4: 120}, corrupt, corrupt_every=10) == 120


def test_sokoban_reference_is_push_optimal_and_solver_agrees():
    env = rlvr_gym.make("rlvr/Sokoban-v0", difficulty="medium", seed=7)
    for index in range(30):
        task = env.get_task(index)
        puzzle = puzzle_from_task(task)
        again = solve_sokoban(puzzle)
        assert again is not None
        assert count_pushes(puzzle, again) == task.ground_truth["optimal_steps"]
        view = task.view().model_dump()
        assert "optimal_steps" not in task.metadata and "ground_truth" not in view and "reference_actions" not in view


def test_flowfree_solver_solves_every_generated_board_independently():
    for difficulty in ("easy", "medium", "hard"):
        env = rlvr_gym.make("rlvr/FlowFree-v0", difficulty=difficulty, seed=11)
        for index in range(20):
            puzzle = puzzle_from_task(env.get_task(index))
            paths = solve_flowfree(puzzle)
            assert paths is not None
            state = puzzle.initial_state()
            for k, path in enumerate(paths):
                state, error = puzzle.apply(state, (k, tuple(path)))
                assert error is None
            assert puzzle.is_solved(state)
            grids = puzzle.reference_frame_cells([(k, tuple(p)) for k, p in enumerate(paths)])
            assert puzzle.frame_solved(puzzle.frame_state(grids[-1])[0])


def test_sokoban_solver_proves_unsolvable_rooms():
    from rlvr_gym.envs.puzzles.sokoban import SokobanPuzzle

    dead = SokobanPuzzle.from_board(["#####", "#$@.#", "#####"])  # box in a corner-like dead end
    assert solve_sokoban(dead) is None
    easy = SokobanPuzzle.from_board(["######", "#@$_.#", "######"])
    assert solve_sokoban(easy) == ["R", "R"]
