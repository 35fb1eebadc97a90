"""Difficulty knobs do what they say, and generation is a pure function of (family, config, seed, index)."""

from __future__ import annotations

import random

import pytest
from pydantic import ValidationError

import rlvr_gym
from rlvr_gym.envs.puzzles.flowfree_gen import FlowFreeConfig, generate_flowfree, is_induced
from rlvr_gym.envs.puzzles.maze import MazeConfig, generate_maze, has_multiple_paths
from rlvr_gym.envs.puzzles.sokoban_gen import SokobanConfig, count_pushes, generate_sokoban, live_cells
from rlvr_gym.envs.puzzles.tasks import make_config


def test_sokoban_knobs():
    config = SokobanConfig(width=7, height=5, num_boxes=3, min_pushes=4)
    for i in range(10):
        puzzle, moves = generate_sokoban(config, random.Random(f"k:{i}"))
        assert (puzzle.rows, puzzle.cols) == (7, 9) and len(puzzle.boxes) == 3
        assert puzzle.boxes != puzzle.goals and count_pushes(puzzle, moves) >= 4
        assert puzzle.boxes <= live_cells(puzzle)
    with pytest.raises(ValidationError):
        SokobanConfig(width=3, height=3, num_boxes=6)


def test_maze_unique_versus_multiple_paths():
    for i in range(15):
        unique, _ = generate_maze(MazeConfig(width=5, height=7), random.Random(i))
        assert (unique.rows, unique.cols) == (15, 11) and not has_multiple_paths(unique)
        braided, moves = generate_maze(
            MazeConfig(width=5, height=7, paths="multiple", extra_openings=2), random.Random(i)
        )
        assert has_multiple_paths(braided) and len(moves) == braided.goal_distance[braided.start]


def test_flowfree_knobs_and_solution_shape():
    config = FlowFreeConfig(size=7, min_colours=5, max_colours=6)
    for i in range(15):
        puzzle, pieces = generate_flowfree(config, random.Random(i))
        assert puzzle.size == 7 and 5 <= puzzle.num_colours <= 6
        assert sorted(c for p in pieces for c in p) == list(range(49))
        assert all(len(p) >= 3 and is_induced(p, puzzle.nbrs) for p in pieces)
    with pytest.raises(ValidationError):
        FlowFreeConfig(size=4, min_colours=7, max_colours=8)


@pytest.mark.parametrize("family", ["sokoban", "maze", "flowfree"])
def test_presets_and_overrides(family):
    assert make_config(family, "easy") == make_config(family, 2) != make_config(family, "hard")
    assert len({make_config(family, level).model_dump_json() for level in range(1, 6)}) == 5
    for bad in ("impossible", 0, 6, True):
        with pytest.raises(ValueError):
            make_config(family, bad)


def test_env_config_overrides_reach_the_generator():
    env = rlvr_gym.make("rlvr/FlowFree-v0", difficulty="easy", config={"size": 4, "min_colours": 2, "max_colours": 3})
    task = env.get_task(0)
    assert task.ground_truth["spec"]["size"] == 4 and task.metadata["config"]["size"] == 4
    assert task.id == "flowfree/train/0" and task.metadata["difficulty"] == 2


@pytest.mark.parametrize("family", ["sokoban", "maze", "flowfree"])
def test_splits_disjoint_and_no_repeats_within_a_split(family):
    import json

    from rlvr_gym.envs.puzzles.tasks import PuzzleTasks

    for level in (2, 3):
        specs = {}
        for split in ("train", "eval"):
            source = PuzzleTasks(game=family, split=split, difficulty=level)
            assert not source.allows_duplicates
            specs[split] = [json.dumps(source.instance(i).puzzle.to_spec(), sort_keys=True) for i in range(60)]
            assert len(set(specs[split])) == len(specs[split]), (family, level, split)
        assert not set(specs["train"]) & set(specs["eval"])
        assert source.task(0).id == f"{family}/eval/0"
    assert PuzzleTasks(game=family, difficulty=1).allows_duplicates  # declared: level 1 boards come from small spaces
