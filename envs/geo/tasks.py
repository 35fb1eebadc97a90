"""Deduction tasks: a scene and a valid DSL program; the answer is the program's value on the scene."""

from __future__ import annotations

import json
import random
from typing import Any

from rlvr_gym import Message, Task
from rlvr_gym.family import TaskSource, stable_seed
from rlvr_gym.types import ContentPart

from . import dsl
from .modes import make_abduction
from .perception import perceived_scene
from .scene import CLASSES, COLOUR_NAMES
from .sources import get_source

MODES = ("deduction", "abduction", "induction")
DSL_HELP = (
    "DSL (JSON lists): objects(class), filter(set, pred) with pred area_gt(m2)|area_lt(m2)|color_is(color)|"
    "touches(region), within(set, NW|NE|SW|SE|center or a region), near(set, obj or region, metres), regions "
    "buffer(obj|set|region, metres), union(set), intersect(r1, r2), quadrant(q), tile(); count, total_area, "
    "area(obj|region), length(set) (road centre-lines, metres), distance (between centroids, metres), largest, "
    "smallest, nearest(obj, set), farthest(obj, set), argmax_count_near(set, set, metres), direction(from, to) as "
    "one of E NE N NW W SW S SE, class_of, attr(obj, color|shape|label), exists(set), gt/lt/eq(a, b) -> yes|no. "
    "Classes: road water building tree vehicle. "
)
INSTRUCTIONS = {
    "deduction": DSL_HELP + "Numbers: counts exact; distances within max(5%, 2 m); areas within max(5%, 10 m2). "
    "Reply with exactly one line `ANSWER: <value>`.",
    "abduction": DSL_HELP + "Reply with exactly one line `ANSWER: <literal>`.",
    "induction": DSL_HELP,
}


def random_program(rng: random.Random, classes: tuple[str, ...] = CLASSES) -> list[Any]:
    """One program from a small typed grammar over the source's classes (difficulty grows with nesting)."""
    movable = [c for c in classes if c != "road"] or list(classes)

    def some_set(depth: int) -> list[Any]:
        base: list[Any] = ["objects", rng.choice(movable)]
        roll = rng.random() if depth < 2 else 1.0
        if roll < 0.2:
            return ["within", base, rng.choice(dsl.QUADRANTS)]
        if roll < 0.3:
            return ["near", base, some_obj(depth + 1), rng.choice([30, 40, 60])]
        if roll < 0.4:
            return ["filter", base, [rng.choice(["area_gt", "area_lt"]), rng.choice([20, 50, 100, 200, 400])]]
        if roll < 0.45:
            return ["filter", base, ["color_is", rng.choice(COLOUR_NAMES)]]
        if roll < 0.5:
            return ["within", base, ["buffer", some_obj(depth + 1), rng.choice([20, 30, 40])]]
        return base

    def some_obj(depth: int) -> list[Any]:
        if depth < 2 and rng.random() < 0.4:
            return [rng.choice(["nearest", "farthest"]), some_obj(depth + 1), some_set(depth + 1)]
        return [rng.choice(["largest", "largest", "smallest"]), some_set(depth + 1)]

    kinds = ["count", "total_area", "area", "distance", "direction", "class_of", "compare", "exists", "attr", "region"]
    kind = rng.choice(kinds + (["length"] if "road" in classes else []))
    if kind in ("count", "total_area", "exists"):
        return [kind, some_set(0)]
    if kind == "area":
        return ["area", some_obj(0)]
    if kind == "region":
        region = ["buffer", some_set(1), rng.choice([5, 10])] if rng.random() < 0.5 else ["union", some_set(1)]
        return ["area", region]
    if kind == "length":
        return ["length", ["within", ["objects", "road"], rng.choice(dsl.QUADRANTS)]]
    if kind in ("distance", "direction"):
        return [kind, some_obj(0), some_obj(0)]
    if kind == "class_of":
        return ["class_of", ["nearest", some_obj(1), ["objects", rng.choice(classes)]]]
    if kind == "attr":
        return ["attr", some_obj(1), rng.choice(["color", "label"])]
    return [rng.choice(["gt", "lt", "eq"]), ["count", some_set(1)], ["count", some_set(1)]]


def probe_seeds(scene_seed: int) -> list[int]:
    """Eight other scenes a program must vary across (spec: non-trivial across a probe batch)."""
    return [stable_seed("geo-probe", scene_seed, k) % 2**31 for k in range(8)]


def valid_task(program: Any, scene, scenes=None, robust_to: str | None = None) -> tuple[Any, str] | None:
    """The program's value when it passes every validity check of the spec, else None.

    Checks: well-typed with an answer type; executes (no empty sets, no near-ties); the same on a re-run; not zero
    and not guessable (a number must exceed twice its tolerance, so `0` never passes); with `scenes`, not constant
    across 8 probe scenes; with `robust_to` (a segmenter name), the same answer on the scene as that segmenter sees it.
    """
    try:
        value, kind = dsl.evaluate(program, scene)
        again, _ = dsl.evaluate(program, scene)
    except dsl.ProgramError:
        return None
    if kind not in dsl.ANSWER_TYPES or again != value:
        return None
    unit = unit_of(program, kind)
    if kind == "num" and (value == 0 or (unit != "count" and value <= 2 * dsl.tolerance(unit, value))):
        return None
    if robust_to is not None:
        try:
            seen, _ = dsl.evaluate(program, perceived_scene(scene, robust_to))
        except dsl.ProgramError:
            return None
        if not dsl.answers_equal(unit, value, seen):
            return None
    if scenes is not None:
        outputs = set()
        for seed in probe_seeds(scene.seed):
            try:
                outputs.add(format_answer(dsl.evaluate(program, scenes.scene(seed))[0]))
            except dsl.ProgramError:
                continue
        if outputs <= {format_answer(value)}:
            return None
    return value, kind


def unit_of(program: list[Any], kind: str) -> str:
    """Answer unit for tolerance: count, m, m2, or the categorical kind (dir, cls, bool)."""
    return dsl.UNITS.get(program[0], kind)


def format_answer(value: Any) -> str:
    return str(value) if isinstance(value, (int, str)) else f"{value:.1f}"


def _depth(node: Any) -> int:
    return 1 + max((_depth(c) for c in node), default=0) if isinstance(node, list) else 0


class GeoTasks(TaskSource):
    """Seeded scene + program pairs; ids geo/<split>/<index>; difficulty from program depth (1..5).

    `source` picks the scenes (procedural, osm, neon); `robust_to` names a segmenter whose view of the scene must
    give the same answer (set by the tools env to its own segmenter).
    """

    family = "geo"

    def __init__(
        self,
        *,
        source: str = "procedural",
        render: str = "both",
        mode: str = "deduction",
        robust_to: str | None = None,
        **split_and_seed: Any,
    ) -> None:
        super().__init__(**split_and_seed)
        if render not in ("both", "text", "image"):
            raise ValueError("render must be 'both', 'text' or 'image'")
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}")
        self.mode, self.render, self.robust_to = mode, render, robust_to
        self.scenes = get_source(source)

    def _make(self, rng: random.Random) -> dict[str, Any]:
        for _ in range(400):
            scene_seed = rng.randrange(2**31)
            program = random_program(rng, self.scenes.classes)
            found = valid_task(program, self.scenes.scene(scene_seed), self.scenes, self.robust_to)
            if found is None:
                continue
            item = {"scene_seed": scene_seed, "program": program, "value": found[0], "unit": unit_of(program, found[1])}
            if self.mode == "abduction":
                hole = make_abduction(program, self.scenes.scene(scene_seed), rng)
                if hole is None:
                    continue
                item["hole"] = hole
            if self.mode == "induction":
                seeds = [scene_seed, *[rng.randrange(2**31) for _ in range(4)]]
                values = [valid_task(program, self.scenes.scene(s), robust_to=self.robust_to) for s in seeds]
                if any(v is None for v in values) or len({format_answer(v[0]) for v in values[:3]}) < 2:
                    continue
                item["seeds"], item["values"] = seeds, [v[0] for v in values]
            return item
        raise RuntimeError("geo: no valid program in 400 draws")

    def _scene_parts(self, seed: int, caption: str) -> list[ContentPart]:
        scene = self.scenes.scene(seed)
        parts = [ContentPart(type="text", text=caption)]
        if self.render in ("both", "image"):
            parts.append(ContentPart(type="image_url", image_url={"url": scene.data_url()}))
        if self.render in ("both", "text"):
            parts.append(ContentPart(type="text", text=scene.to_text()))
        return parts

    def task(self, index: int) -> Task:
        item = self.draw(index, self._make, lambda it: f"{self.mode}|{it['scene_seed']}|{json.dumps(it['program'])}")
        program = json.dumps(item["program"])
        truth: dict[str, Any] = {
            "mode": self.mode,
            "scene_source": self.scenes.name,
            "scene_seed": item["scene_seed"],
            "value": item["value"],
            "unit": item["unit"],
            "program": item["program"],
        }
        if self.mode == "deduction":
            parts = self._scene_parts(item["scene_seed"], "Scene:")
            ask = f"Program: {program}\nWhat is its value on this scene?"
            answer = format_answer(item["value"])
        elif self.mode == "abduction":
            hole = item["hole"]
            truth["hole"] = hole
            parts = self._scene_parts(item["scene_seed"], "Scene:")
            ask = (
                f'Program with a hole: {json.dumps(hole["shown"])}\nFill the hole "?" (a {hole["kind"]} literal) '
                f"so the program's value on this scene is {format_answer(item['value'])}."
            )
            answer = str(hole["answer"])
        else:
            truth["seeds"], truth["values"] = item["seeds"], item["values"]
            parts = []
            for k in range(3):
                parts += self._scene_parts(
                    item["seeds"][k], f"Example {k + 1}: answer {format_answer(item['values'][k])}"
                )
            ask = (
                "Write one program that gives these answers on the example scenes (and on hidden scenes of the same "
                "kind). Reply with `ANSWER: <program as a JSON list on one line>`."
            )
            answer = program
        parts.append(ContentPart(type="text", text=f"{INSTRUCTIONS[self.mode]}\n\n{ask}"))
        return self.make_task(
            index,
            prompt=[Message(role="user", content=parts)],
            ground_truth=truth,
            reference_actions=[f"ANSWER: {answer}"],
            difficulty=min(5, max(1, _depth(item["program"]) - 1 + (self.mode == "induction"))),
            mode=self.mode,
            scene_source=self.scenes.name,
        )
