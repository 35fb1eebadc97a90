"""Deduction tasks: a scene and a valid DSL program; the answer is the program's value on the scene."""

from __future__ import annotations

import json
import random
from typing import Any

from rlvr_gym import Message, Task
from rlvr_gym.family import TaskSource
from rlvr_gym.types import ContentPart

from . import dsl
from .scene import CLASSES, SOURCES

INSTRUCTIONS = (
    "Evaluate the spatial program on the aerial scene. Operators: objects(class), within(set, NW|NE|SW|SE|center),"
    " near(set, obj, metres), count, total_area, largest, nearest(obj, set), area, distance (centroids, metres),"
    " direction(from, to) as one of E NE N NW W SW S SE, class_of, gt(a, b) -> yes|no. "
    "Numbers: counts exact; distances within max(5%, 2 m); areas within max(5%, 10 m2). "
    "Reply with exactly one line `ANSWER: <value>` (numbers to one decimal place)."
)


def random_program(rng: random.Random) -> list[Any]:
    """One program from a small typed grammar (difficulty grows with nesting)."""

    def some_set(depth: int) -> list[Any]:
        base: list[Any] = ["objects", rng.choice(CLASSES[1:])]
        roll = rng.random() if depth < 2 else 1.0
        if roll < 0.25:
            return ["within", base, rng.choice(dsl.QUADRANTS)]
        if roll < 0.4:
            return ["near", base, some_obj(depth + 1), rng.choice([30, 40, 60])]
        return base

    def some_obj(depth: int) -> list[Any]:
        if depth < 2 and rng.random() < 0.4:
            return ["nearest", some_obj(depth + 1), some_set(depth + 1)]
        return ["largest", some_set(depth + 1)]

    kind = rng.choice(["count", "total_area", "area", "distance", "direction", "class_of", "gt"])
    if kind in ("count", "total_area"):
        return [kind, some_set(0)]
    if kind == "area":
        return ["area", some_obj(0)]
    if kind in ("distance", "direction"):
        return [kind, some_obj(0), some_obj(0)]
    if kind == "class_of":
        return ["class_of", ["nearest", some_obj(1), ["objects", rng.choice(CLASSES)]]]
    return ["gt", ["count", some_set(1)], ["count", some_set(1)]]


def valid_task(program: list[Any], scene) -> Any | None:
    """The program's value when it is well-typed, executes without empty sets/near-ties and is non-trivial."""
    try:
        value, kind = dsl.evaluate(program, scene)
    except dsl.ProgramError:
        return None
    if kind == "num" and value == 0:
        return None
    if program[0] == "distance" and value < 1.0:
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
    """Seeded scene + program pairs; ids geo/<split>/<index>; difficulty from program depth (1..5)."""

    family = "geo"

    def __init__(
        self, *, split: str = "train", seed: int = 0, source: str = "procedural", render: str = "both"
    ) -> None:
        super().__init__(split=split, seed=seed)
        if render not in ("both", "text", "image"):
            raise ValueError("render must be 'both', 'text' or 'image'")
        self.scenes = SOURCES[source]
        self.render = render

    def _make(self, rng: random.Random) -> dict[str, Any]:
        for _ in range(200):
            scene_seed = rng.randrange(2**31)
            program = random_program(rng)
            found = valid_task(program, self.scenes.scene(scene_seed))
            if found is not None:
                return {
                    "scene_seed": scene_seed,
                    "program": program,
                    "value": found[0],
                    "unit": unit_of(program, found[1]),
                }
        raise RuntimeError("geo: no valid program in 200 draws")

    def task(self, index: int) -> Task:
        item = self.draw(index, self._make, lambda it: f"{it['scene_seed']}|{json.dumps(it['program'])}")
        scene = self.scenes.scene(item["scene_seed"])
        text = f"{INSTRUCTIONS}\n\nProgram: {json.dumps(item['program'])}"
        parts = []
        if self.render in ("both", "image"):
            parts.append(ContentPart(type="image_url", image_url={"url": scene.data_url()}))
        if self.render in ("both", "text"):
            text = f"{scene.to_text()}\n\n{text}"
        parts.append(ContentPart(type="text", text=text))
        answer = format_answer(item["value"])
        return self.make_task(
            index,
            prompt=[Message(role="user", content=parts)],
            ground_truth={"value": item["value"], "unit": item["unit"], "program": item["program"]},
            reference_actions=[f"ANSWER: {answer}"],
            difficulty=min(5, max(1, _depth(item["program"]) - 1)),
            mode="deduction",
            scene_source=self.scenes.name,
            scene_seed=item["scene_seed"],
        )
