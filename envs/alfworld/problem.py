"""Sample one ALFWorld task in a shipped scene and write it as a PDDL problem for the `alfred` domain.

Facts follow what alfworld's own generator writes for its TextWorld games (receptacle/object types, canContain
from `VAL_RECEPTACLE_OBJECTS`, openable, heatable/coolable/cleanable/toggleable from `VAL_ACTION_OBJECTS`,
receptacle and object locations); the goal is the task type's PDDL from `alfworld.gen.goal_library`.
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass, field, replace

from .scenes import LAMP_HOSTS, Receptacle, Scene, constants

MAX_INSTANCES = 3
_PDDL_CHARS = {"-": "_minus_", "#": "-", "|": "_bar_", "+": "_plus_", ".": "_dot_", ",": "_comma_"}


def fix_pddl_chars(text: str) -> str:
    """ALFRED ids → PDDL names, exactly alfworld's escaping (so its demangler names them "apple 1" etc.)."""
    return "".join(_PDDL_CHARS.get(ch, ch) for ch in text)


def loc_id(point: tuple[int, ...]) -> str:
    return "loc|" + "|".join(str(p) for p in point)


@dataclass
class PlacedObject:
    id: str
    type: str
    receptacle: Receptacle


@dataclass
class Problem:
    task_type: str
    scene: Scene
    params: dict[str, str]
    objects: list[PlacedObject]
    start: tuple[int, int, int, int]
    receptacle_points: dict[str, tuple[int, int, int, int]] = field(default_factory=dict)

    def pddl(self, name: str) -> str:
        return write_pddl(self, name)


@functools.cache
def _pickable_types() -> frozenset[str]:
    c = constants()
    out: set[str] = set()
    for contents in c.VAL_RECEPTACLE_OBJECTS.values():
        out |= {o for o in contents if not o.endswith("Sliced")}
    return frozenset(out - (set(c.RECEPTACLES) - set(c.MOVABLE_RECEPTACLES)))


def _hosts(scene: Scene, otype: str) -> list[Receptacle]:
    c = constants()
    if otype in c.VAL_ACTION_OBJECTS["Toggleable"]:
        return [r for r in scene.receptacles if r.type in LAMP_HOSTS]
    return [r for r in scene.receptacles if otype in c.VAL_RECEPTACLE_OBJECTS.get(r.type, ())]


def _object_id(otype: str, rng: random.Random, used: set[str]) -> str:
    while True:
        oid = f"{otype}|{rng.uniform(-4, 4):+06.2f}|{rng.uniform(0, 2):+06.2f}|{rng.uniform(-4, 4):+06.2f}"
        if oid not in used:
            used.add(oid)
            return oid


_ACTION_RECEPTACLE = {
    "pick_clean_then_place_in_recep": ("SinkBasin", "Cleanable"),
    "pick_heat_then_place_in_recep": ("Microwave", "Heatable"),
    "pick_cool_then_place_in_recep": ("Fridge", "Coolable"),
}


def _params(object_target: str = "", parent_target: str = "", toggle_target: str = "") -> dict[str, str]:
    return {
        "object_target": object_target,
        "parent_target": parent_target,
        "toggle_target": toggle_target,
        "mrecep_target": "",
        "object_sliced": "",
    }


def goal_params(task_type: str, scene: Scene) -> list[dict[str, str]]:
    """Every task target this scene can host, in a fixed order (the generator enumerates goals from this list)."""
    c = constants()
    if scene.room not in c.GOALS_VALID[task_type]:
        return []
    types = sorted(set(scene.object_types))
    pickable = _pickable_types()
    if task_type == "look_at_obj_in_light":
        lamps = [t for t in types if t in c.VAL_ACTION_OBJECTS["Toggleable"] and _hosts(scene, t)]
        objs = [t for t in types if t in pickable and _hosts(scene, t)]
        return [_params(object_target=o, toggle_target=lamp) for o in objs for lamp in lamps]
    rtypes = scene.receptacle_types()
    action_recep = _ACTION_RECEPTACLE.get(task_type)
    out = []
    for otype in types:
        if otype not in pickable:
            continue
        if action_recep and (action_recep[0] not in rtypes or otype not in c.VAL_ACTION_OBJECTS[action_recep[1]]):
            continue
        for rtype in sorted(rtypes):
            if rtype == (action_recep[0] if action_recep else None) or otype not in c.VAL_RECEPTACLE_OBJECTS.get(
                rtype, ()
            ):
                continue
            # the object needs a host other than the goal receptacle type
            if any(r.type != rtype for r in _hosts(scene, otype)):
                out.append(_params(object_target=otype, parent_target=rtype))
    return out


def restrict_scene(
    scene: Scene, task_type: str, params: dict[str, str], rng: random.Random, max_receptacles: int
) -> Scene:
    """Keep the receptacles the task needs (a host of the target that is not the goal type, one goal receptacle,
    the sink/microwave/fridge, the lamp's host) plus random others, up to `max_receptacles` (easy games)."""
    c = constants()
    recs = list(scene.receptacles)
    target, parent, toggle = params["object_target"], params["parent_target"], params["toggle_target"]
    needed: list[str] = []  # receptacle ids (ids are unique within a scene; comparing them is cheap)

    def need(options: list[Receptacle]) -> None:
        if options and not any(r.id in needed for r in options):
            needed.append(rng.choice(options).id)

    need([r for r in _hosts(scene, target) if r.type != parent])
    if parent:
        need([r for r in recs if r.type == parent])
    tool = {
        "pick_clean_then_place_in_recep": "SinkBasin",
        "pick_heat_then_place_in_recep": "Microwave",
        "pick_cool_then_place_in_recep": "Fridge",
    }.get(task_type)
    if tool:
        need([r for r in recs if r.type == tool])
    if toggle and toggle in c.VAL_ACTION_OBJECTS["Toggleable"]:
        need(_hosts(scene, toggle))
    others = [r.id for r in recs if r.id not in needed]
    extra = rng.sample(others, max(0, min(len(others), max_receptacles - len(needed))))
    keep = set(needed) | set(extra)
    return replace(scene, receptacles=tuple(r for r in recs if r.id in keep))


def sample_problem(
    task_type: str,
    scene: Scene,
    params: dict[str, str],
    rng: random.Random,
    *,
    max_distractor_types: int = 8,
    max_instances: int = MAX_INSTANCES,
) -> Problem:
    """Place the objects for a goal (`params`, from `goal_params`): the targets, then up to `max_distractor_types`
    other object classes of the scene (1..`max_instances` instances each), every object in a receptacle that can
    hold it. Fewer objects = faster engine, shorter text. `scene` may be trimmed first (`restrict_scene`)."""
    c = constants()
    types = sorted(set(scene.object_types))
    keep = {params["object_target"], params["toggle_target"]}
    others = [t for t in types if t not in keep]
    chosen = set(rng.sample(others, min(max_distractor_types, len(others)))) | keep
    types = [t for t in types if t in chosen]
    used: set[str] = set()
    objects: list[PlacedObject] = []
    target, parent, toggle = params["object_target"], params["parent_target"], params["toggle_target"]
    for otype in types:
        hosts = _hosts(scene, otype)
        if not hosts or (otype not in _pickable_types() and otype != toggle):
            continue
        if otype in c.VAL_ACTION_OBJECTS["Toggleable"] and otype != toggle:
            continue
        n = rng.randint(1, max_instances)
        if otype == target:
            n = max(n, 2) if task_type == "pick_two_obj_and_place" else n
            hosts = [r for r in hosts if r.type != parent] or hosts
        if otype == toggle:
            n = 1
        for _ in range(n):
            objects.append(PlacedObject(_object_id(otype, rng, used), otype, rng.choice(hosts)))
    points = {r.id: r.point for r in scene.receptacles}
    taken = {p[:2] for p in points.values()}
    free = [p for p in scene.floor_points if p not in taken] or list(scene.floor_points)
    sx, sz = free[rng.randrange(len(free))]
    return Problem(task_type, scene, params, objects, (sx, sz, 90 * rng.randrange(4), 30), points)


def _unique_locations(problem: Problem) -> dict[str, str]:
    """One location per receptacle; receptacles sharing an interaction point get distinct horizons."""
    seen: set[str] = {loc_id(problem.start)}
    out = {}
    for rec in problem.scene.receptacles:
        x, z, rot, hor = rec.point
        name = loc_id((x, z, rot, hor))
        while name in seen:
            hor += 1
            name = loc_id((x, z, rot, hor))
        seen.add(name)
        out[rec.id] = name
    return out


def write_pddl(problem: Problem, name: str) -> str:
    """The PDDL problem text (before id escaping is applied by `fix_pddl_chars`)."""
    c = constants()
    import alfworld.gen.goal_library as glib

    # Only the type constants this problem can use: every extra constant multiplies Fast Downward's grounding.
    params = problem.params
    otypes = sorted(
        {o.type for o in problem.objects}
        | {"Knife", "ButterKnife"}
        | {t for t in (params["object_target"], params["toggle_target"]) if t}
    )
    static = sorted(
        {r.type for r in problem.scene.receptacles}
        | {"SinkBasin", "Microwave", "Fridge"}
        | ({params["parent_target"]} if params["parent_target"] else set())
    )
    locs = _unique_locations(problem)
    start = loc_id(problem.start)
    recs = problem.scene.receptacles
    decl = ["agent1 # agent"]
    decl += [f"{t}Type # otype" for t in otypes] + [f"{t}Type # rtype" for t in static]
    decl += [f"{o.id} # object" for o in problem.objects] + [f"{r.id} # receptacle" for r in recs]
    decl += [f"{loc} # location" for loc in sorted({*locs.values(), start})]
    init = ["(= (totalCost) 0)", f"(atLocation agent1 {start})"]
    present_otypes = sorted({o.type for o in problem.objects})
    for rec in recs:
        init.append(f"(receptacleType {rec.id} {rec.type}Type)")
        init.append(f"(receptacleAtLocation {rec.id} {locs[rec.id]})")
        if rec.type in c.OPENABLE_CLASS_SET:
            init.append(f"(openable {rec.id})")
    for rtype in sorted({r.type for r in recs}):
        init += [
            f"(canContain {rtype}Type {o}Type)" for o in present_otypes if o in c.VAL_RECEPTACLE_OBJECTS.get(rtype, ())
        ]
    flags = {"Cleanable": "cleanable", "Heatable": "heatable", "Coolable": "coolable", "Sliceable": "sliceable"}
    for obj in problem.objects:
        init.append(f"(objectType {obj.id} {obj.type}Type)")
        init.append(f"(inReceptacle {obj.id} {obj.receptacle.id})")
        init.append(f"(objectAtLocation {obj.id} {locs[obj.receptacle.id]})")
        if obj.type in c.VAL_ACTION_OBJECTS["Toggleable"]:
            init.append(f"(toggleable {obj.id})")
        else:
            init.append(f"(pickupable {obj.id})")
        init += [f"({pred} {obj.id})" for key, pred in flags.items() if obj.type in c.VAL_ACTION_OBJECTS[key]]
    p = problem.params
    goal = glib.gdict[problem.task_type]["pddl"].format(
        obj=p["object_target"], recep=p["parent_target"], toggle=p["toggle_target"], mrecep=p["mrecep_target"]
    )
    text = (
        f"(define (problem {name})\n  (:domain alfred)\n  (:objects\n    "
        + "\n    ".join(decl)
        + "\n  )\n  (:init\n    "
        + "\n    ".join(init)
        + "\n  )\n"
        + goal
    )
    return fix_pddl_chars(text)


def goal_text(task_type: str, params: dict[str, str], template: int) -> str:
    """Template `template` of the goal library for this task type, filled like alfworld's `get_templated_task_desc`."""
    text = goal_templates(task_type)[template]
    return text.format(
        obj=params["object_target"].lower(),
        recep=params["parent_target"].lower(),
        toggle=params["toggle_target"].lower(),
        mrecep=params["mrecep_target"].lower(),
    )


def goal_templates(task_type: str) -> list[str]:
    import alfworld.gen.goal_library as glib

    return list(glib.gdict[task_type]["templates"])
