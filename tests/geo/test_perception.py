"""Perception tools and the multi-turn tools env."""

from __future__ import annotations

import json

from rlvr_gym.envs.geo.env import GeoToolsEnv
from rlvr_gym.envs.geo.perception import ColorSegmenter, OracleSegmenter
from rlvr_gym.envs.geo.scene import ProceduralScenes


def test_colorseg_matches_oracle_on_buildings():
    scene = ProceduralScenes().scene(3)
    pixels = sorted((d.bbox, d.area) for d in ColorSegmenter().segment(scene, "building"))
    truth = sorted((d.bbox, d.area) for d in OracleSegmenter().segment(scene, "building"))
    assert pixels == truth and truth


def test_unknown_class_gives_nothing():
    assert ColorSegmenter().segment(ProceduralScenes().scene(3), "dragon") == []


def test_tool_call_then_answer():
    env = GeoToolsEnv(segmenter="oracle")
    env.reset(seed=5)
    tool = env.step_result("segment(tree)")
    assert not tool.terminated and isinstance(json.loads(tool.observation[0].text()), list)
    final = env.step_result(env.task.reference_actions[0])
    assert final.terminated and final.reward == 1.0
