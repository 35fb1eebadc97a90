"""ALFRED scene layouts and object tables shipped with the `alfworld` package (no game files needed).

A scene gives the static receptacles (ids and interaction points from `gen/layouts/FloorPlan<N>-openable.json`,
plus one synthetic instance for receptacle classes the scene lists in `-objects.json` but without a point) and
the object classes present. Seen/unseen splits follow ALFRED's train/test scene numbers.
"""

from __future__ import annotations

import functools
import json
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np

TASK_TYPES = (
    "pick_and_place_simple",
    "look_at_obj_in_light",
    "pick_clean_then_place_in_recep",
    "pick_heat_then_place_in_recep",
    "pick_cool_then_place_in_recep",
    "pick_two_obj_and_place",
)
# Short names accepted in configs.
TASK_ALIASES = {
    "pick_and_place": "pick_and_place_simple",
    "look_at_obj_in_light": "look_at_obj_in_light",
    "pick_clean_then_place": "pick_clean_then_place_in_recep",
    "pick_heat_then_place": "pick_heat_then_place_in_recep",
    "pick_cool_then_place": "pick_cool_then_place_in_recep",
    "pick_two_obj": "pick_two_obj_and_place",
}
# Receptacles that can host a desk/floor lamp. The ALFRED tables list no container for lamps (their placement
# came from the simulator), so this small table is ours.
LAMP_HOSTS = ("SideTable", "Desk", "Dresser", "Shelf", "CoffeeTable", "TVStand", "Ottoman")
STEP = 0.25  # ALFRED grid size in metres


@dataclass(frozen=True)
class Receptacle:
    id: str  # ALFRED object id, e.g. "Cabinet|+00.68|+00.50|-02.20"
    type: str
    point: tuple[int, int, int, int]  # grid x, grid z, rotation, horizon


@dataclass(frozen=True)
class Scene:
    number: int
    room: str
    receptacles: tuple[Receptacle, ...]
    object_types: tuple[str, ...]
    floor_points: tuple[tuple[int, int], ...]

    def receptacle_types(self) -> set[str]:
        return {r.type for r in self.receptacles}


def alfworld_root() -> Path:
    import alfworld

    return Path(alfworld.__file__).parent


@functools.cache
def constants():
    """`alfworld.gen.constants` (imported lazily: it is a plain tables module)."""
    import alfworld.gen.constants as c

    return c


def room_type(number: int) -> str:
    for room, numbers in constants().SCENE_TYPE.items():
        if number in numbers:
            return room
    raise ValueError(f"scene {number} has no room type")


def scene_numbers(split: str) -> list[int]:
    """Scenes of a split that have layout files: `seen` = ALFRED train scenes, `unseen` = test scenes."""
    c = constants()
    numbers = {"seen": c.TRAIN_SCENE_NUMBERS, "unseen": c.TEST_SCENE_NUMBERS, "all": c.SCENE_NUMBERS}[split]
    layouts = alfworld_root() / "gen" / "layouts"
    return sorted(n for n in numbers if (layouts / f"FloorPlan{n}-openable.json").exists())


def display_kind(alfred_id: str) -> str:
    """The name alfworld's demangler shows for an id, without its number: the id's first part, plus "basin" when
    the id mentions a basin (`Sink|...|SinkBasin` -> "sinkbasin")."""
    head = alfred_id.split("|", 1)[0]
    return (head + ("basin" if "basin" in alfred_id.lower() else "")).lower()


def receptacle_type(alfred_id: str) -> str:
    parts = alfred_id.split("|")
    return parts[-1] if parts[-1].endswith("Basin") else parts[0]


def _grid_point(raw: list[float]) -> tuple[int, int, int, int]:
    return (round(raw[0] / STEP), round(raw[1] / STEP), int(raw[2]), int(raw[3]))


@functools.cache
def load_scene(number: int) -> Scene:
    c = constants()
    layouts = alfworld_root() / "gen" / "layouts"
    openable = json.loads((layouts / f"FloorPlan{number}-openable.json").read_text())
    object_types = tuple(json.loads((layouts / f"FloorPlan{number}-objects.json").read_text()))
    floor = np.load(layouts / f"FloorPlan{number}-layout.npy")
    floor_points = tuple(sorted({(round(x / STEP), round(z / STEP)) for x, z in floor.tolist()}))
    static = set(c.RECEPTACLES) - set(c.MOVABLE_RECEPTACLES)
    recs = [
        Receptacle(rid, receptacle_type(rid), _grid_point(p))
        for rid, p in sorted(openable.items())
        if receptacle_type(rid) in static
    ]
    have = {r.type for r in recs}
    rng = random.Random(f"scene:{number}")
    for rtype in sorted(set(object_types) & static - have):
        count = 4 if rtype == "StoveBurner" else 1
        for k in range(count):
            x, z = floor_points[rng.randrange(len(floor_points))]
            rid = f"{rtype}|{x * STEP:+06.2f}|+00.90|{z * STEP + 0.01 * k:+06.2f}"
            if rtype.endswith("Basin"):  # ALFRED spells basins `Sink|...|SinkBasin` (shown as "sinkbasin 1")
                rid = f"{rtype[: -len('Basin')]}|{rid.split('|', 1)[1]}|{rtype}"
            recs.append(Receptacle(rid, rtype, (x, z, 90 * rng.randrange(4), 30)))
    return Scene(number, room_type(number), tuple(recs), object_types, floor_points)
