"""Text and frame envs: registration, check_env, determinism, action formats, feedback, rendering, export."""

from __future__ import annotations

import base64
import subprocess
import sys

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import rlvr_gym
from rlvr_gym.envs.puzzles.frames import read_frames
from rlvr_gym.envs.puzzles.render import png_data_url, render_moves, save_animation
from rlvr_gym.envs.puzzles.tasks import puzzle_from_task, task_solution

IDS = [f"rlvr/{name}{variant}-v0" for name in ("Sokoban", "Maze", "FlowFree") for variant in ("", "Frames")]


def test_all_six_registered():
    ids = {info.id for info in rlvr_gym.list_envs()}
    assert set(IDS) <= ids
    assert all(rlvr_gym.env_info(i).family == "puzzles" for i in IDS)


@pytest.mark.parametrize("env_id", IDS)
def test_check_env_passes(env_id):
    env = rlvr_gym.make(env_id, difficulty="easy")
    check_env(env, skip_render_check=True)


@pytest.mark.parametrize("env_id", IDS)
def test_same_seed_same_task_and_verdict(env_id):
    a, b = rlvr_gym.make(env_id, seed=5), rlvr_gym.make(env_id, seed=5)
    obs_a, info_a = a.reset(seed=12)
    obs_b, info_b = b.reset(seed=12)
    assert obs_a == obs_b and info_a["task_id"] == info_b["task_id"]
    assert a.task.model_dump() == b.task.model_dump()
    assert a.get_task(0).ground_truth != a.get_task(1).ground_truth
    assert rlvr_gym.make(env_id, seed=6).get_task(0).ground_truth != a.get_task(0).ground_truth
    va = a.step(a.task.reference_actions[0])[4]["verdict"]
    vb = b.step(b.task.reference_actions[0])[4]["verdict"]
    assert va == vb and va.reward == 1.0


@pytest.mark.parametrize("env_id", IDS)
def test_task_rescorable_from_json(env_id):
    env = rlvr_gym.make(env_id, difficulty="easy", seed=2)
    task = env.get_task(3).model_dump(mode="json")
    fresh = rlvr_gym.make(env_id, difficulty="hard")  # another config: the task's own spec is used
    assert fresh.verify(task, task["reference_actions"]).reward == 1.0
    meta = task["metadata"]
    assert meta["index"] == 3 and meta["seed"] == 2 and meta["difficulty"] == 2 and meta["config"]
    assert task["id"] == f"{meta['family']}/train/3" and meta["family"] in env_id.lower()


@pytest.mark.parametrize("action", ["UDLR", "up, left", "R R D", "<answer>r,r</answer>", "moves: ← ↑", "Down"])
def test_direction_formats_parse(action):
    env = rlvr_gym.make("rlvr/Maze-v0", difficulty="easy")
    env.reset(options={"task_index": 0})
    moves, error = env.puzzle.parse_action(action)
    assert error is None and moves and set(moves) <= set("UDLR")


@pytest.mark.parametrize("env_id", ["rlvr/Sokoban-v0", "rlvr/Maze-v0"])
def test_step_by_step_play_and_feedback(env_id):
    env = rlvr_gym.make(env_id, difficulty="medium", max_turns=200)
    env.reset(options={"task_index": 1})
    moves = task_solution(env.task)
    obs, reward, terminated, truncated, info = env.step("hello there")
    assert info["valid_action"] is False and not terminated and "could not read" in obs[0]["content"]
    for i, move in enumerate(moves):
        obs, reward, terminated, truncated, info = env.step(move.lower() if i % 2 else move)
        assert info["valid_action"], obs
    assert terminated and info["verdict"].passed
    components = info["verdict"].components
    assert components["valid_moves"] < 1.0 and components["steps_over_optimal"] == 0.0
    assert info["verdict"].reward == 1.0  # validity is a constraint (the bad message was not played), not a reward


def test_a_message_with_an_illegal_move_is_rejected_whole():
    env = rlvr_gym.make("rlvr/Maze-v0", difficulty="easy")
    env.reset(options={"task_index": 0})
    first = task_solution(env.task)[0]
    wall = next(m for m in "UDLR" if env.puzzle.apply(env.puzzle.apply(env.puzzle.start, first)[0], m)[0] is None)
    obs, _, terminated, _, info = env.step(f"{first} {wall} {first}")
    assert not terminated and info["valid_action"] is False and info["moves_played"] == 0
    assert "move 2" in obs[0]["content"] and "wall" in obs[0]["content"]
    assert env.play.state == env.puzzle.start


def test_moving_on_after_the_solution_and_hedged_answers_are_rejected():
    env = rlvr_gym.make("rlvr/Maze-v0", difficulty="easy", max_turns=1)
    task = env.get_task(0)
    reference = task.reference_actions[0]
    back = {"U": "D", "D": "U", "L": "R", "R": "L"}[reference.split()[-1]]
    for hedge in (f"{reference} {back}", f"{reference}\n{reference}"):
        verdict = env.verify(task, [hedge])
        assert not verdict.passed and verdict.reward == 0.0, hedge
    flow = rlvr_gym.make("rlvr/FlowFree-v0", difficulty="easy", max_turns=1)
    task = flow.get_task(0)
    lines = task.reference_actions[0].splitlines()
    assert flow.verify(task, ["\n".join(lines)]).passed
    verdict = flow.verify(task, ["\n".join([lines[0].rsplit(" ", 1)[0], *lines])])  # two paths for colour A
    assert not verdict.passed and not verdict.valid and "two paths" in verdict.error


def test_sokoban_restart_and_truncation_verdict_is_dense():
    env = rlvr_gym.make("rlvr/Sokoban-v0", difficulty="medium", max_turns=2)
    env.reset(options={"task_index": 2})
    moves = task_solution(env.task)
    half = moves[: len(moves) - 1]
    env.step(" ".join(half) + " restart")
    assert env.play.state == env.puzzle.initial_state()
    *_, terminated, truncated, info = env.step(" ".join(half))
    assert truncated and not terminated
    verdict = info["verdict"]
    assert not verdict.passed and verdict.components["steps_over_optimal"] == -1.0
    assert 0.0 < verdict.reward < 0.1  # progress only: 0.1 x boxes gained


def test_flowfree_paths_step_by_step_and_crossing_rejected():
    env = rlvr_gym.make("rlvr/FlowFree-v0", difficulty="easy", max_turns=20)
    env.reset(options={"task_index": 0})
    reference = env.task.reference_actions[0].splitlines()
    partial = reference[0].rsplit(" ", 1)[0]  # colour A minus its last cell
    obs, _, terminated, _, info = env.step(partial)
    assert info["valid_action"] and not terminated and "a" in obs[0]["content"].split("Board:")[1]
    other = reference[1].split(":")[1].split()  # B's cells, claimed for A -> crosses B at B's endpoint
    obs, _, _, _, info = env.step("A: " + " ".join(reversed(other)))
    assert info["valid_action"] is False and "path A" in obs[0]["content"]
    for bad in ("Z: (0,0)", "A: (9,9)", "no paths here"):
        assert env.step(bad)[4]["valid_action"] is False
    *_, terminated, _, info = env.step("\n".join(reference))
    assert terminated and info["verdict"].passed


@pytest.mark.parametrize("name", ["Sokoban", "Maze", "FlowFree"])
def test_frames_env_accepts_arrays_lists_gif_and_paths(name, tmp_path):
    env = rlvr_gym.make(f"rlvr/{name}Frames-v0", difficulty="easy", allow_frame_paths=True, max_turns=4)
    obs, _ = env.reset(options={"task_index": 0})
    parts = obs[0]["content"]
    assert parts[0]["type"] == "text" and parts[1]["image_url"]["url"].startswith("data:image/png;base64,")
    frames = render_moves(env.puzzle, task_solution(env.task), env.tile_size)
    assert np.array_equal(next(read_frames(parts[1]["image_url"]["url"])), frames[0])
    gif = save_animation(frames, tmp_path / "solution.gif")
    gif_url = "data:image/gif;base64," + base64.b64encode(gif.read_bytes()).decode()
    np.save(tmp_path / "solution.npy", frames)
    for action in (frames, list(frames), f"here you go: {gif_url}", str(tmp_path / "solution.npy")):
        env.reset(options={"task_index": 0})
        *_, terminated, _, info = env.step(action)
        assert terminated and info["verdict"].reward == 1.0, info
    assert rlvr_gym.make(f"rlvr/{name}Frames-v0", render_mode="rgb_array").render() is None  # before reset


def test_frames_env_rejects_bad_input_without_raising(tmp_path):
    env = rlvr_gym.make("rlvr/MazeFrames-v0", difficulty="easy", max_turns=20)
    env.reset(options={"task_index": 0})
    frames = render_moves(env.puzzle, task_solution(env.task), env.tile_size)
    np.save(tmp_path / "f.npy", frames)
    bad = [
        frames.astype(np.float64),
        frames[..., 0],
        frames[:, :2, :2],
        [frames[0], frames[1][:4]],
        None,
        3.5,
        "data:image/png;base64,AAAA",
        str(tmp_path / "f.npy"),
        "",
        "x" * 10_000,
        np.zeros((600, 8, 8, 3), np.uint8),
    ]
    for action in bad:
        obs, reward, terminated, truncated, info = env.step(action)
        assert info["valid_action"] is False and reward == 0.0 and not terminated, action
        assert "Invalid frames" in obs[0]["content"]


@pytest.mark.parametrize("env_id", IDS)
def test_render_modes(env_id):
    env = rlvr_gym.make(env_id, difficulty="easy", render_mode="ansi")
    env.reset(seed=0)
    board = env.render()
    assert isinstance(board, str) and board == env.puzzle.text(env.puzzle.initial_state())
    env = rlvr_gym.make(env_id, difficulty="easy", render_mode="rgb_array")
    env.reset(seed=0)
    image = env.render()
    assert image.dtype == np.uint8 and image.shape == (env.puzzle.rows * 16, env.puzzle.cols * 16, 3)


def test_animation_export_roundtrip(tmp_path):
    env = rlvr_gym.make("rlvr/Sokoban-v0", difficulty="easy")
    task = env.get_task(0)
    frames = render_moves(puzzle_from_task(task), task_solution(task))
    for name in ("t.png", "t.gif"):
        path = save_animation(frames, tmp_path / name)
        back = np.stack(list(read_frames(str(path), allow_paths=True)))
        kept = [0] + [t for t in range(1, len(frames)) if not np.array_equal(frames[t], frames[t - 1])]
        assert np.array_equal(back, frames[kept])  # exact (flat colours), repeated frames merged by the encoder
    assert np.array_equal(np.stack(list(read_frames(png_data_url(frames[0])))), frames[:1])


def test_package_import_stays_light():
    code = (
        "import sys, rlvr_gym.envs.puzzles as p; p.register_envs(); "
        "assert not [m for m in sys.modules if m.startswith('rlvr_gym.envs.puzzles.')], sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_frames_env_single_turn_invalid_gives_zero_verdict():
    env = rlvr_gym.make("rlvr/FlowFreeFrames-v0", difficulty="easy")
    env.reset(options={"task_index": 1})
    obs, reward, terminated, truncated, info = env.step("not frames")
    assert truncated and not terminated and info["valid_action"] is False
    verdict = info["verdict"]
    assert verdict.reward == 0.0 and not verdict.valid and "could not read frames" in verdict.error
    assert set(verdict.components) >= {"solved", "progress", "legal_transitions"}


def test_lazy_verify_export():
    from rlvr_gym.envs.puzzles import verify

    task = rlvr_gym.make("rlvr/MazeFrames-v0", difficulty="easy").get_task(0)
    frames = render_moves(puzzle_from_task(task), task_solution(task))
    assert verify(task, [frames]).passed


def test_maze_path_f1_metric_text_and_frames():
    from rlvr_gym.envs.puzzles.frames import verify_frames
    from rlvr_gym.envs.puzzles.render import render_grids

    env = rlvr_gym.make("rlvr/Maze-v0", difficulty="medium", max_turns=1)
    env.reset(options={"task_index": 0})
    moves = task_solution(env.task)
    verdict = env.step(" ".join(moves[:6]))[4]["verdict"]
    assert verdict.components["path_f1"] == pytest.approx(2 * 7 / (7 + len(moves) + 1))
    puzzle = puzzle_from_task(env.task)
    grids = puzzle.reference_frame_cells(moves)
    assert verify_frames(puzzle, render_grids(puzzle, grids)).components["path_f1"] == 1.0
    assert verify_frames(puzzle, render_grids(puzzle, grids[:7])).components["path_f1"] == verdict.components["path_f1"]
