"""Perception tools and the multi-turn tools env."""

from __future__ import annotations

import json
import math

from rlvr_gym.envs.geo.env import GeoToolsEnv
from rlvr_gym.envs.geo.perception import ColorSegmenter
from rlvr_gym.envs.geo.scene import ProceduralScenes


def _matched(scene, cls: str):
    """(truth object, nearest ColorSeg detection) pairs for one class."""
    found = ColorSegmenter().segment(scene, cls)
    return [(o, min(found, key=lambda d: math.dist(d.centroid, o.centroid))) for o in scene.of_class(cls)]


def test_colorseg_measures_visible_roofs_and_misses_occluded_parts():
    """Pixels are sampled at their centres, so a visible roof's pixel area is unbiased (within 5%, the area
    tolerance); a roof under a tree crown measures less: perception from the image is not the ground truth."""
    visible, occluded = 0, 0
    for seed in range(12):
        scene = ProceduralScenes().scene(seed)
        trees = [t.geometry for t in scene.of_class("tree")]
        for o, d in _matched(scene, "building"):
            if any(o.geometry.intersects(t) for t in trees):
                occluded += d.area < 0.95 * o.area
            else:
                visible += 1
                assert abs(d.area - o.area) <= 0.05 * o.area and math.dist(d.centroid, o.centroid) < 1.0
    assert visible >= 40 and occluded >= 1


def test_scenes_have_rotated_non_rectangular_footprints_and_varied_scales():
    scenes = [ProceduralScenes().scene(seed) for seed in range(30)]
    assert {s.size for s in scenes} == {192.0, 256.0, 320.0}
    assert all(round(s.size * s.px_per_m) >= 512 for s in scenes)
    roofs = [o for s in scenes for o in s.of_class("building")]
    assert any(len(o.points) == 6 for o in roofs)  # L-shapes
    assert sum(abs(o.geometry.minimum_rotated_rectangle.area - (o.x1 - o.x0) * (o.y1 - o.y0)) > 1 for o in roofs) > 10


def test_unknown_class_gives_nothing():
    assert ColorSegmenter().segment(ProceduralScenes().scene(3), "dragon") == []


def test_tools_env_shows_no_scene_and_its_oracle_perceives():
    """GeoX-Tools: the prompt holds no image and no object list; the reference solution calls `segment` for the
    classes its program reads, and only then answers."""
    env = GeoToolsEnv(segmenter="oracle")
    observation, _ = env.reset(seed=5)
    parts = [
        part for message in observation for part in (message["content"] if isinstance(message["content"], list) else [])
    ]
    assert all(part["type"] == "text" for part in parts)
    assert "Objects:" not in json.dumps(observation) and "box=(" not in json.dumps(observation)
    reference = env.task.reference_actions
    assert reference[:-1] and all(a.startswith("segment(") for a in reference[:-1])
    for action in reference[:-1]:
        tool = env.step_result(action)
        assert not tool.terminated and isinstance(json.loads(tool.observation[0].text()), list)
    final = env.step_result(reference[-1])
    assert final.terminated and final.reward == 1.0
