"""One test per DSL primitive on a hand-made scene whose answers are worked out by hand."""

from __future__ import annotations

import math

import pytest

from rlvr_gym.envs.geo import dsl
from rlvr_gym.envs.geo.scene import GeoObject, Scene

GREY, ORANGE = (("color", "grey"),), (("color", "orange"),)
SCENE = Scene(
    "hand",
    0,
    (
        GeoObject(0, "road", "rect", 0, 100, 256, 110, attrs=GREY),
        GeoObject(1, "building", "rect", 10, 10, 30, 30, attrs=ORANGE),  # 400 m2 at (20, 20)
        GeoObject(2, "building", "rect", 200, 200, 240, 220, attrs=GREY),  # 800 m2 at (220, 210)
        GeoObject(3, "tree", "disc", 50, 50, 60, 60),  # centre (55, 55)
        GeoObject(4, "tree", "disc", 180, 190, 190, 200),  # centre (185, 195)
        GeoObject(5, "vehicle", "rect", 120, 101, 126, 104, attrs=(("color", "red"),)),  # on road 0
        GeoObject(6, "water", "rect", 150, 20, 190, 60),  # 1600 m2
        GeoObject(7, "road", "line", 0, 196, 100, 204, points=((0, 200), (100, 200)), width=8),  # 100 m long
    ),
)
BUILDINGS, TREES = ["objects", "building"], ["objects", "tree"]
SMALL, BIG = ["smallest", BUILDINGS], ["largest", BUILDINGS]


def value(program):
    return dsl.evaluate(program, SCENE)[0]


def ids(program) -> list[int]:
    return sorted(o.id for o in value(program))


@pytest.mark.parametrize(
    "program,expected",
    [
        (BUILDINGS, [1, 2]),
        (["filter", BUILDINGS, ["area_gt", 500]], [2]),
        (["filter", BUILDINGS, ["area_lt", 500]], [1]),
        (["filter", BUILDINGS, ["color_is", "grey"]], [2]),
        (["filter", ["objects", "road"], ["touches", ["buffer", ["largest", ["objects", "vehicle"]], 1]]], [0]),
        (["within", TREES, "NW"], [3]),
        (["within", TREES, ["buffer", SMALL, 50]], [3]),
        (["near", TREES, BIG, 40], [4]),
        (["near", TREES, ["quadrant", "NW"], 0], [3]),
    ],
)
def test_set_primitives(program, expected):
    assert dsl.typecheck(program) == "set"
    assert ids(program) == expected


@pytest.mark.parametrize(
    "program,expected",
    [
        (["count", BUILDINGS], 2),
        (["total_area", BUILDINGS], 1200),
        (["area", BIG], 800),
        (["area", ["union", BUILDINGS]], 1200),
        (["area", ["buffer", SMALL, 10]], 400 + 4 * 20 * 10 + math.pi * 100),
        (["area", ["intersect", ["quadrant", "NW"], ["quadrant", "center"]]], 64 * 64),
        (["area", ["intersect", ["quadrant", "NW"], ["quadrant", "NE"]]], 0),
        (["area", ["quadrant", "SE"]], 128 * 128),
        (["area", ["tile"]], 256 * 256),
        (["length", ["objects", "road"]], 256 + 100),
        (["distance", SMALL, BIG], math.hypot(200, 190)),
    ],
)
def test_number_and_region_primitives(program, expected):
    assert dsl.typecheck(program) == "num"
    assert value(program) == pytest.approx(expected, rel=2e-3)


@pytest.mark.parametrize(
    "program,expected_id",
    [
        (BIG, 2),
        (SMALL, 1),
        (["nearest", SMALL, TREES], 3),
        (["farthest", SMALL, TREES], 4),
        (["argmax_count_near", BUILDINGS, TREES, 45], 2),
    ],
)
def test_object_primitives(program, expected_id):
    assert dsl.typecheck(program) == "obj"
    assert value(program).id == expected_id


@pytest.mark.parametrize(
    "program,expected",
    [
        (["direction", SMALL, BIG], "SE"),
        (["direction", BIG, SMALL], "NW"),
        (["class_of", ["nearest", ["largest", ["objects", "vehicle"]], ["objects", "road"]]], "road"),
        (["attr", BIG, "color"], "grey"),
        (["attr", SMALL, "shape"], "rect"),
        (["exists", ["objects", "vehicle"]], "yes"),
        (["exists", ["filter", BUILDINGS, ["area_gt", 5000]]], "no"),
        (["gt", ["count", TREES], ["count", ["objects", "water"]]], "yes"),
        (["gt", ["count", TREES], ["count", BUILDINGS]], "no"),
        (["lt", ["count", ["objects", "vehicle"]], ["count", TREES]], "yes"),
        (["eq", ["count", TREES], ["count", BUILDINGS]], "yes"),
        (["eq", ["total_area", BUILDINGS], ["area", BIG]], "no"),
    ],
)
def test_answer_primitives(program, expected):
    assert dsl.typecheck(program) in dsl.ANSWER_TYPES
    assert value(program) == expected


@pytest.mark.parametrize(
    "program,reason",
    [
        (["largest", ["filter", BUILDINGS, ["area_gt", 5000]]], "empty set"),  # an object is needed
        (["area", ["union", ["filter", BUILDINGS, ["area_gt", 5000]]]], "empty set"),
        (["argmax_count_near", BUILDINGS, TREES, 60], "near-tie"),  # each building has one tree within 60 m
        (["gt", ["area", ["largest", ["objects", "water"]]], ["area", ["buffer", SMALL, 11]]], "near-tie"),  # ~1660
        (["largest", TREES], "near-tie"),  # two trees of the same size
        (["attr", BIG, "label"], "no 'label'"),  # this building carries no label
    ],
)
def test_runtime_rejections(program, reason):
    with pytest.raises(dsl.ProgramError) as info:
        dsl.evaluate(program, SCENE)
    assert info.value.kind == "runtime" and reason in str(info.value)


def test_direction_near_a_sector_boundary_is_rejected():
    a = GeoObject(0, "building", "rect", 0, 0, 10, 10)
    east_by_north = [  # bearings 20 degrees (within 5 of the E/NE boundary at 22.5) and 10 degrees (clear)
        GeoObject(
            1,
            "tree",
            "disc",
            5 + 100 * math.cos(math.radians(d)) - 1,
            5 - 100 * math.sin(math.radians(d)) - 1,
            5 + 100 * math.cos(math.radians(d)) + 1,
            5 - 100 * math.sin(math.radians(d)) + 1,
        )
        for d in (20, 10)
    ]
    program = ["direction", ["largest", BUILDINGS], ["largest", TREES]]
    with pytest.raises(dsl.ProgramError, match="sector boundary"):
        dsl.evaluate(program, Scene("hand", 1, (a, east_by_north[0])))
    assert dsl.evaluate(program, Scene("hand", 2, (a, east_by_north[1])))[0] == "E"


@pytest.mark.parametrize(
    "program",
    [
        ["filter", BUILDINGS, BUILDINGS],  # a set where a predicate belongs
        ["within", TREES, "north"],  # not a quadrant
        ["buffer", SMALL, -5],  # negative distance
        ["attr", BIG, "__class__"],  # not an attribute key
        ["tile", 1],  # tile takes no arguments
        ["area", BUILDINGS],  # area of a set: use total_area or union
        ["union", BIG],  # union of one object
        ["color_is", "green", "blue"],
        ["count", ["area_gt", 10]],
        ["eq", ["count", TREES], "2"],
    ],
)
def test_type_rejections(program):
    with pytest.raises(dsl.ProgramError) as info:
        dsl.typecheck(program)
    assert info.value.kind == "type_error"
