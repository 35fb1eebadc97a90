"""No reward for not solving (issue #42): restarts, back-and-forth moves, stubs and held frames earn nothing."""

from __future__ import annotations

import random

import pytest

import rlvr_gym

TEXT = ["rlvr/Sokoban-v0", "rlvr/Maze-v0", "rlvr/FlowFree-v0"]
FRAMES = ["rlvr/SokobanFrames-v0", "rlvr/MazeFrames-v0", "rlvr/FlowFreeFrames-v0"]


@pytest.mark.parametrize("env_id", TEXT)
def test_restarts_back_and_forth_and_stubs_earn_nothing(env_id):
    env = rlvr_gym.make(env_id, difficulty="easy")
    task = env.get_task(0)
    policies = env.floor_policies(task, random.Random(0))
    zero = [name for name in policies if name.startswith(("restart", "back_and_forth", "endpoint"))]
    assert zero
    for name in zero:
        assert env.verify(task, policies[name]).reward == 0.0, name


def test_maze_refuses_restart_which_its_prompt_never_offers():
    env = rlvr_gym.make("rlvr/Maze-v0", difficulty="easy")
    env.reset(options={"task_index": 0})
    assert "restart" not in env.task.prompt_messages()[0].text()
    *_, info = env.step("restart")
    assert info["valid_action"] is False
    sokoban = rlvr_gym.make("rlvr/Sokoban-v0", difficulty="easy")
    sokoban.reset(options={"task_index": 0})
    assert sokoban.step("restart")[4]["valid_action"] is True


def test_a_restart_undoes_progress_and_its_credit():
    env = rlvr_gym.make("rlvr/Sokoban-v0", difficulty="medium")
    task = env.get_task(2)
    moves = task.ground_truth["solution"]
    played = env.verify(task, [" ".join(moves[:-1])])
    assert 0.0 < played.reward < 0.1
    assert env.verify(task, [" ".join(moves[:-1]), "restart"]).reward == 0.0


@pytest.mark.parametrize("env_id", FRAMES)
def test_a_held_first_frame_and_a_step_away_and_back_earn_nothing(env_id):
    env = rlvr_gym.make(env_id, difficulty="easy")
    task = env.get_task(0)
    policies = env.floor_policies(task, random.Random(0))
    assert env.verify(task, policies["hold"]).reward == 0.0
    if env_id != "rlvr/FlowFreeFrames-v0":  # FlowFree cannot step back: a drawn cell stays
        assert env.verify(task, policies["away_and_back"]).reward == 0.0
