"""Real scene sources (OSM Helsinki, NEON photos), the PBF reader, the scene cache and the robustness check."""

from __future__ import annotations

import io
import json
import random
import struct
import subprocess
import sys
import zlib

import pytest
from PIL import Image

from rlvr_gym.envs.geo import dsl, verifier
from rlvr_gym.envs.geo.osm_pbf import read_pbf
from rlvr_gym.envs.geo.perception import perceived_scene
from rlvr_gym.envs.geo.scene import GeoObject, Scene
from rlvr_gym.envs.geo.sources import SOURCES, get_source
from rlvr_gym.envs.geo.tasks import GeoTasks, valid_task
from rlvr_gym.types import EnvUnavailable

REAL = [
    pytest.param(
        name,
        marks=pytest.mark.skipif(SOURCES[name].available() is not None, reason="run scripts/setup_geo.sh first"),
    )
    for name in ("osm", "neon")
]


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes | int) -> bytes:
    if isinstance(payload, int):
        return _varint(number << 3) + _varint(payload)
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _zz(n: int) -> int:
    return (n << 1) ^ (n >> 63)


def test_pbf_reader_on_a_hand_encoded_file():
    """Dense nodes (delta + zigzag coordinates, tags) and a way (delta refs), zlib-compressed as in real files."""
    strings = _field(1, b"") + _field(1, b"natural") + _field(1, b"tree") + _field(1, b"building") + _field(1, b"yes")
    ids, lats, lons = [10, 11, 12], [600_000_000, 600_001_000, 600_002_000], [249_000_000, 249_001_000, 249_000_500]

    def packed_delta(values):
        return b"".join(_varint(_zz(b - a)) for a, b in zip([0, *values], values, strict=False))

    dense = (
        _field(1, packed_delta(ids))
        + _field(8, packed_delta(lats))
        + _field(9, packed_delta(lons))
        + _field(10, b"".join(_varint(v) for v in (1, 2, 0, 0, 0)))  # node 10: natural=tree
    )
    way = _field(1, 99) + _field(2, _varint(3)) + _field(3, _varint(4)) + _field(8, packed_delta([10, 11, 12, 10]))
    block = _field(1, strings) + _field(2, _field(2, dense) + _field(3, way))
    blob = _field(2, len(block)) + _field(3, zlib.compress(block))
    header = _field(1, b"OSMData") + _field(3, len(blob))
    data = read_pbf(struct.pack(">I", len(header)) + header + blob)
    assert data.nodes[11] == pytest.approx((24.9001, 60.0001))
    assert data.node_tags == {10: {"natural": "tree"}}
    assert data.ways == [(99, {"building": "yes"}, [10, 11, 12, 10])]


@pytest.mark.parametrize("name", REAL)
def test_real_scene_has_attribution_and_ground_truth_inside_the_tile(name):
    scene = SOURCES[name].scene(11)
    assert scene.objects and all(o.cls in SOURCES[name].classes for o in scene.objects)
    assert all(
        -1e-6 <= o.x0 <= o.x1 <= scene.size + 1e-6 and -1e-6 <= o.y0 <= o.y1 <= scene.size + 1e-6 for o in scene.objects
    )
    image = Image.open(io.BytesIO(scene.render_png()))
    assert image.size == (round(scene.size * scene.px_per_m),) * 2
    assert ("OpenStreetMap" if name == "osm" else "NEON") in image.text["Attribution"]
    assert "Data:" in scene.to_text()


def test_osm_tile_answers_match_its_geometry():
    if SOURCES["osm"].available() is not None:
        pytest.skip("run scripts/setup_geo.sh first")
    scene = SOURCES["osm"].scene(3)
    buildings = scene.of_class("building")
    assert dsl.evaluate(["count", ["objects", "building"]], scene)[0] == len(buildings)
    union = dsl.evaluate(["area", ["union", ["objects", "building"]]], scene)[0]
    assert union == pytest.approx(sum(o.area for o in buildings), rel=0.02)  # OSM footprints barely overlap
    roads = scene.of_class("road")
    assert dsl.evaluate(["length", ["objects", "road"]], scene)[0] == pytest.approx(sum(o.length for o in roads))


@pytest.mark.parametrize("name", ["procedural", *REAL])
def test_scenes_are_identical_in_another_process(name):
    code = (
        "from rlvr_gym.envs.geo.sources import SOURCES; import hashlib; "
        f"s = SOURCES[{name!r}].scene(5); print(hashlib.sha256(repr(s.objects).encode() + s.render_png()).hexdigest())"
    )
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    import hashlib

    scene = SOURCES[name].scene(5)
    assert other == hashlib.sha256(repr(scene.objects).encode() + scene.render_png()).hexdigest()
    assert SOURCES[name].scene(5) is scene  # the (source, seed) cache


@pytest.mark.parametrize("name", REAL)
def test_real_source_tasks_reference_passes_wrong_fails(name):
    source = GeoTasks(split="train", source=name)
    for index in range(4):
        task = source.task(index)
        assert task.metadata["scene_source"] == name
        assert verifier.verify(task, task.reference_actions).reward == 1.0
        for wrong in verifier.wrong_answers(task, random.Random(index)):
            assert not verifier.verify(task, wrong).passed


def test_missing_data_is_env_unavailable(monkeypatch, tmp_path):
    monkeypatch.setenv("RLVR_GYM_GEO_DATA", str(tmp_path))
    with pytest.raises(EnvUnavailable, match="setup_geo.sh"):
        get_source("neon")


def _tree_scene(seed: int) -> Scene:
    return Scene(
        "hand", seed, (GeoObject(0, "tree", "disc", 10, 10, 30, 30), GeoObject(1, "tree", "disc", 60, 60, 70, 70))
    )


def test_robust_to_perception_rejects_answers_the_tool_gets_wrong():
    """A disc's area seen as its box (Box segmenter) is 27% off: kept for the oracle, rejected for the box tool."""
    program = ["area", ["largest", ["objects", "tree"]]]
    scene = _tree_scene(1)
    assert valid_task(program, scene) is not None
    assert valid_task(program, scene, robust_to="oracle") is not None
    assert valid_task(program, scene, robust_to="box") is None
    assert dsl.evaluate(program, perceived_scene(scene, "box"))[0] == 400
    assert valid_task(["count", ["objects", "tree"]], scene, robust_to="box") is not None


def test_validity_rejects_non_answers_and_guessable_numbers():
    scene = _tree_scene(2)
    assert valid_task(["objects", "tree"], scene) is None  # a set is not an answer
    small = Scene("hand", 3, (GeoObject(0, "vehicle", "rect", 5, 5, 8, 9),))
    assert valid_task(["area", ["largest", ["objects", "vehicle"]]], small) is None  # 12 m2: "0" is within 10 m2
    assert valid_task(json.loads('["count", ["objects", "tree"]]'), scene) == (2, "num")


def test_tools_env_tasks_are_robust_for_colorseg():
    tasks = GeoTasks(split="train", robust_to="colorseg")
    for index in range(3):
        task = tasks.task(index)
        program, scene = task.ground_truth["program"], SOURCES["procedural"].scene(task.ground_truth["scene_seed"])
        seen = dsl.evaluate(program, perceived_scene(scene, "colorseg"))[0]
        assert dsl.answers_equal(task.ground_truth["unit"], task.ground_truth["value"], seen)
