"""Deduction tasks: a scene and a valid DSL program; the answer is the program's value on the scene."""

from __future__ import annotations

import json
import math
import random
import statistics
from collections import Counter
from functools import lru_cache
from typing import Any

from rlvr_gym import Message, Task
from rlvr_gym.family import TaskSource, split_of, stable_seed
from rlvr_gym.types import ContentPart

from . import dsl
from .modes import CANDIDATES, HOLE, get, literal_slots, outcome, substitute
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


KINDS = ("count", "total_area", "area", "distance", "direction", "class_of", "compare", "exists", "attr", "region")


def random_program(rng: random.Random, classes: tuple[str, ...] = CLASSES, kind: str | None = None) -> list[Any]:
    """One program from a small typed grammar over the source's classes (difficulty grows with nesting).

    `kind` picks the question (one of `KINDS` or "length"); None draws it uniformly (the proposer's examples)."""
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
        if roll < 0.55:
            return ["filter", base, ["touches", ["buffer", some_obj(depth + 1), rng.choice([10, 20])]]]
        return base

    def some_obj(depth: int) -> list[Any]:
        roll = rng.random() if depth < 2 else 1.0
        if roll < 0.35:
            return [rng.choice(["nearest", "farthest"]), some_obj(depth + 1), some_set(depth + 1)]
        if roll < 0.45:
            return ["argmax_count_near", some_set(depth + 1), ["objects", rng.choice(movable)], rng.choice([30, 50])]
        return [rng.choice(["largest", "largest", "smallest"]), some_set(depth + 1)]

    kind = kind or rng.choice([*KINDS, *(["length"] if "road" in classes else [])])
    if kind in ("count", "total_area", "exists"):
        return [kind, some_set(0)]
    if kind == "area":
        return ["area", some_obj(0)]
    if kind == "region":
        roll = rng.random()
        if roll < 0.3:
            return ["area", ["buffer", some_set(1), rng.choice([5, 10])]]
        if roll < 0.55:
            return ["area", ["union", some_set(1)]]
        if roll < 0.8:  # a buffer clipped to the tile: the part of the zone that is in the picture
            return ["area", ["intersect", ["tile"], ["buffer", some_obj(1), rng.choice([20, 40])]]]
        return ["area", ["intersect", ["union", some_set(1)], ["quadrant", rng.choice(dsl.QUADRANTS)]]]
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


def _runnable(program: Any) -> bool:
    """Whether a program is within the DSL's size limits and well-typed: most grammar draws of a distance or
    direction question are too deep, and building an OSM tile to learn that costs 30 ms."""
    try:
        dsl.check(program)
    except dsl.ProgramError:
        return False
    return True


def _depth(node: Any) -> int:
    return 1 + max((_depth(c) for c in node), default=0) if isinstance(node, list) else 0


# The question mix, a cycle of 28 slots (task index mod 28) of (question kind, slot number), interleaved so that any
# run of consecutive tasks covers the kinds. `_slot_target` turns a slot and its cycle into the answer it asks for,
# rotating categorical answers so that each fills at most one slot in 56 tasks: counts rotate over 1..10 in 5 slots
# (each count 5 times in 280 tasks), yes/no share one slot alternating compare/exists, the 4 direction slots walk
# the 8 compass points and the 3 colour slots the 9 colours. Areas, lengths and distances are asked for in five bins
# of equal mass per source (`answer_bins`), so no constant number sits in a crowd of answers. A constant or majority
# answer thus passes about 1/56 of the tasks (`baselines.py` measures it; tests/geo/test_baselines.py holds its
# Wilson bound under 5%). `class_of` is not asked: the class of any object the DSL can name is written in its program
# (`objects(<class>)`).
_SLOT_GROUPS: tuple[tuple[tuple[str, int], ...], ...] = (
    tuple(("count", j) for j in range(5)),
    tuple(("distance", j) for j in range(5)),
    (("total_area", 0), ("area", 3), ("region", 5), ("total_area", 1), ("area", 4)),
    tuple(("direction", j) for j in range(4)),
    (("region", 6), ("attr", 0), ("total_area", 2), ("attr", 1), ("region", 7)),
    (("bool", 0), ("area", 2), ("length", 5), ("attr", 2)),
)
DEDUCTION_SLOTS: tuple[tuple[str, int], ...] = tuple(
    group[i] for i in range(max(map(len, _SLOT_GROUPS))) for group in _SLOT_GROUPS if i < len(group)
)
# Sources without colours ask a count, a direction and a road length in the colour slots: falling back to the next
# numeric slot made areas 30 of 56 OSM questions, and their bins of different kinds overlapped.
_UNCOLOURED = {("attr", 0): ("count", 5), ("attr", 1): ("direction", 4), ("attr", 2): ("length", 6)}
UNCOLOURED_SLOTS: tuple[tuple[str, int], ...] = tuple(_UNCOLOURED.get(slot, slot) for slot in DEDUCTION_SLOTS)


def deduction_slots(coloured: bool) -> tuple[tuple[str, int], ...]:
    """The deduction cycle of a source: colour questions only where objects have colours."""
    return DEDUCTION_SLOTS if coloured else UNCOLOURED_SLOTS


COUNT_TARGETS = 10  # counts asked: 1..10
# Abduction: the hole's literal cycles over every candidate of every kind, one slot each.
ABDUCTION_TARGETS: tuple[tuple[str, Any], ...] = tuple(
    (kind, value) for kind in ("cls", "quadrant", "num", "color") for value in CANDIDATES[kind]
)
# Abduction questions (top operators) rotate over these (`area` comes from the buffer-radius holes and as the last
# resort), so number holes (25 of the 44 literals) do not make every question an `area(buffer(x, ?))`; STEP_NUMBERS
# are the number holes that fit a near radius or an area threshold.
ABDUCTION_TOPS = ("count", "total_area", "distance")
STEP_NUMBERS = tuple(n for n in CANDIDATES["num"] if 20 <= n <= 300)
TARGET_DRAWS = 200  # in-split draws spent on one slot before the next one is tried (a target the source cannot give)
# Deduction draws on a recurring (OSM) source hit a slot less often: its bins are narrow, identical 3 m trees make
# `largest`/`smallest` of trees a tie, water is often absent. With 200 draws 6 of 10 distance and 7 of 10 direction
# slots of 56 tasks fell back to a numeric slot.
RECURRING_BUDGET = 4
# Induction asks for numbers and compass points: region/length programs have few shapes (`area(buffer(objects(c),
# 10))`), and yes/no answers on five scenes have few patterns, so a constant program would match many tasks.
INDUCTION_KINDS = ("count", "total_area", "area", "distance", "direction")
_OUT = "out of split"  # a draw that belongs to the other split: it does not count against a slot's budget
RENDERS = ("image", "text", "none")
NUMERIC = ("total_area", "area", "region", "distance")


BINS = 5  # numeric answers are asked for in this many bins of equal mass
BIN_DRAWS, BIN_SCENES = 400, 40
# Recurring sources: geometric bins 1.5x wide (a constant's +-5% covers a quarter of one), from 10 absolute
# tolerances (100 m2, 20 m: below that the absolute tolerance lumps answers together) to the 98th percentile.
BIN_RATIO, BIN_FLOOR, BIN_TOP = 1.5, 10, 0.98


@lru_cache(maxsize=64)
def answer_bins(source: str, kind: str) -> tuple[tuple[float, float], ...]:
    """Bins for a numeric question kind on a scene source, from its answers over seeded grammar draws on a pool of
    scenes, so bins follow the source's scale (a 32 m NEON crop has no 200 m distance) and every bin is reachable.
    `BINS` bins of equal mass, so a constant number sits in at most one bin's share; on a `recurring` source, whose
    answers repeat (one building is the largest in many tiles), narrow geometric bins, which cap the share of any
    one repeated answer to that of a bin."""
    scenes = get_source(source)
    rng = random.Random(stable_seed("geo-bins", source, kind))
    pool = [scenes.scene(stable_seed("geo-bins", source, k) % 2**31) for k in range(BIN_SCENES)]
    values, unit = [], dsl.UNITS.get(kind, "m2")  # region: an area
    for _ in range(BIN_DRAWS):
        program = random_program(rng, scenes.classes, kind)
        try:
            value, answer_kind = dsl.evaluate(program, rng.choice(pool))
        except dsl.ProgramError:
            continue
        if value > 2 * dsl.tolerance(unit_of(program, answer_kind), value):  # what `valid_task` keeps
            values.append(float(value))
    if len(values) < 2 * BINS:
        return ()
    if not scenes.recurring:
        edges = [min(values), *statistics.quantiles(values, n=BINS), math.inf]
    else:
        low = max(BIN_FLOOR * dsl.tolerance(unit, 0.0), min(values))
        high = statistics.quantiles(values, n=100)[round(100 * BIN_TOP) - 1]
        edges = [low * BIN_RATIO**k for k in range(max(1, math.ceil(math.log(high / low, BIN_RATIO))) + 1)]
    return tuple(zip(edges, edges[1:], strict=False))


def _slot_target(source: str, kind: str, j: int, block: int, per_cycle: int) -> str | tuple[float, float] | None:
    """The answer a deduction slot asks for in cycle `block`: a string as `format_answer` writes it, a bin, or
    None when the source gives no such answers. Categorical answers walk on by `per_cycle` (the kind's slots in a
    cycle) each cycle, so every value is asked equally often."""
    if kind in ("total_area", "area", "region", "length", "distance"):
        bins = answer_bins(source, kind)
        return bins[(j + block) % len(bins)] if bins else None
    if kind == "count":
        return str((j + per_cycle * block) % COUNT_TARGETS + 1)
    if kind == "direction":
        return dsl.DIRECTIONS[(j + per_cycle * block) % len(dsl.DIRECTIONS)]
    if kind == "bool":
        return ("yes", "no")[(block // 2) % 2]
    return COLOUR_NAMES[(j + per_cycle * block) % len(COLOUR_NAMES)]  # attr: colours


def _slot_kind(kind: str, block: int) -> str:
    """The program kind `random_program` draws for a slot: the one yes/no slot alternates compare and exists."""
    return ("compare", "exists")[block % 2] if kind == "bool" else kind


def hole_tops(kind: str, literal: Any, turn: int) -> tuple[str, ...]:
    """The questions (top operators) an abduction slot tries, in order: `ABDUCTION_TOPS` rotated by `turn`, then
    `area`. A number hole outside `STEP_NUMBERS` asks only `area` (a buffer radius: thresholds under 20 select
    nothing on a tile, radii over 300 all of it), 9 of the 44 slots: the others leave `area` last so that the four
    questions are asked about equally often."""
    if kind == "num" and literal not in STEP_NUMBERS:
        return ("area",)
    k = turn % len(ABDUCTION_TOPS)
    return (*ABDUCTION_TOPS[k:], *ABDUCTION_TOPS[:k], "area")


def _hole_program(rng: random.Random, kind: str, literal: Any, classes: tuple[str, ...], top: str) -> list[Any] | None:
    """A program with top operator `top` whose value moves with one `kind` literal (holes of kind color, num,
    quadrant), so the other candidates of the kind rarely give the same value; random programs seldom have such a
    slot. None for a class hole: every `objects` slot of a grammar program already moves its value."""
    from .scene import COLOURS

    movable = [c for c in classes if c != "road"] or list(classes)
    cls = rng.choice(movable)
    anchor = ["largest", ["objects", rng.choice(movable)]]
    if kind == "num" and top == "area":
        return ["area", ["buffer", rng.choice([["objects", cls], ["largest", ["objects", cls]]]), literal]]
    if kind == "num":  # a step function of the number: identified where each neighbour candidate moves the value
        below = rng.random() < 0.5
        sized = ["filter", ["objects", cls], ["area_lt" if below else "area_gt", literal]]
        if top == "distance":  # the largest object under the threshold (the smallest over it), from an anchor
            return ["distance", ["largest" if below else "smallest", sized], anchor]
        chosen = rng.choice([["near", ["objects", cls], anchor, literal], sized])
    elif kind == "quadrant":
        if top == "area":
            return ["area", ["intersect", ["union", ["objects", cls]], ["quadrant", literal]]]
        chosen = ["within", ["objects", cls], literal]
    else:
        painted = [c for c in classes if literal in COLOURS.get(c, {})]
        if kind != "color" or not painted:
            return None
        chosen = ["filter", ["objects", rng.choice(painted)], ["color_is", literal]]
        if top == "area":
            return ["area", ["largest", chosen]]
    if top == "distance":  # programs stay within the DSL's 20 nodes: no nested anchor
        return ["distance", ["largest", chosen], anchor]
    return [top, chosen]


def _restriction_paths(program: Any, path: tuple[int, ...] = ()) -> list[tuple[int, ...]]:
    """Paths of the `filter` / `within` / `near` nodes of a program (each restricts the set in its first argument)."""
    if not isinstance(program, list):
        return []
    found = [path] if program[0] in ("filter", "within", "near") else []
    for i, child in enumerate(program[1:], start=1):
        found += _restriction_paths(child, (*path, i))
    return found


def program_classes(program: Any) -> list[str]:
    """The classes a program reads (`objects(<class>)` nodes): what a perception tool must be asked about."""
    if not isinstance(program, list):
        return []
    found = [program[1]] if program[0] == "objects" and len(program) > 1 else []
    for child in program[1:]:
        found += [c for c in program_classes(child) if c not in found]
    return found


class GeoTasks(TaskSource):
    """Seeded scene + program pairs; ids geo/<split>/<index>; difficulty from program depth (1..5).

    `source` picks the scenes (procedural, osm, neon); `robust_to` names a segmenter whose view of the scene must
    give the same answer (set by the tools env to its own segmenter). `render` is what the prompt shows of the scene:
    `image` (default: the picture and the question, so the answer needs perception), `text` (the object list: an
    ablation for text-only models; the oracle's view) or `none` (nothing: the tools env, where perception tools are
    the only way to learn about the scene). With `tools`, the reference solution first calls `segment(<class>)` for
    every class its program reads (the tools env's oracle perceives like any agent). The question mix is balanced by
    `DEDUCTION_SLOTS`, `ABDUCTION_TARGETS` and the induction slots.
    """

    family = "geo"

    def __init__(
        self,
        *,
        source: str = "procedural",
        render: str = "image",
        mode: str = "deduction",
        robust_to: str | None = None,
        tools: bool = False,
        **split_and_seed: Any,
    ) -> None:
        super().__init__(**split_and_seed)
        if render not in RENDERS:
            raise ValueError(
                f"render must be one of {RENDERS} (the object list is only shown as the explicit 'text' ablation)"
            )
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}")
        self.mode, self.render, self.robust_to, self.tools = mode, render, robust_to, tools
        self.scenes = get_source(source)

    def _in_split(self, mode: str, scene_seed: int, program: Any) -> bool:
        return split_of(f"{mode}|{scene_seed}|{json.dumps(program)}", self.eval_fraction) == self.split

    def _attempt(self, rng: random.Random, draw: Any, budget: int = TARGET_DRAWS) -> dict[str, Any] | None:
        """`draw(rng)` until it gives an item, `budget` in-split draws at most."""
        tried = 0
        for _ in range(budget * 40):
            item = draw(rng)
            if item is _OUT:
                continue
            if item is not None:
                return item
            tried += 1
            if tried >= budget:
                break
        return None

    def _draw_valid(self, rng: random.Random, kind: str | None, target: Any) -> Any:
        """One scene + program of `kind` whose answer is `target` (a string, a (low, high) bin, None: any value);
        None, or `_OUT` (a draw of the other split)."""
        scene_seed = rng.randrange(2**31)
        program = random_program(rng, self.scenes.classes, kind)
        if not self._in_split(self.mode, scene_seed, program):
            return _OUT
        if not _runnable(program):  # too deep or too large on any scene: skip the scene build
            return None
        scene = self.scenes.scene(scene_seed)
        if target is not None:  # the cheap check first: the answer on this scene alone
            try:
                value = dsl.evaluate(program, scene)[0]
            except dsl.ProgramError:
                return None
            hit = target[0] <= value < target[1] if isinstance(target, tuple) else format_answer(value) == target
            if not hit:
                return None
        found = valid_task(program, scene, self.scenes, self.robust_to)
        if found is None:
            return None
        return {"scene_seed": scene_seed, "program": program, "value": found[0], "unit": unit_of(program, found[1])}

    def _make_deduction(self, index: int, rng: random.Random) -> dict[str, Any]:
        """The slot's question (sources without colours have no `attr` slots); when the source cannot give it (no
        roads for `length`, no colours through a perception tool for `attr`, a target out of reach), a numeric slot
        instead: a categorical answer never fills a second slot, so the cap on constant answers holds."""
        slots = deduction_slots(self.scenes.coloured)
        block, n = index // len(slots), len(slots)
        order = [slots[index % n]]
        order += [slots[(index + k) % n] for k in range(1, n) if slots[(index + k) % n][0] in NUMERIC]
        per_cycle = Counter(kind for kind, _ in slots)
        for kind, j in order:
            if kind == "attr" and self.robust_to:
                continue
            target = _slot_target(self.scenes.name, kind, j, block, per_cycle[kind])
            if target is None:
                continue
            drawn, budget = _slot_kind(kind, block), TARGET_DRAWS * (RECURRING_BUDGET if self.scenes.recurring else 1)
            item = self._attempt(rng, lambda r, k=drawn, t=target: self._draw_valid(r, k, t), budget)
            if item is not None:
                return item
        raise RuntimeError(f"geo: no valid deduction program for index {index}")

    def _make_abduction(self, index: int, rng: random.Random) -> dict[str, Any]:
        """The slot's literal, asked through the slot's question (top operator; the next one where the scene source
        cannot give it); the next literal only when no question can."""
        turn = index + index // len(ABDUCTION_TARGETS)  # a literal meets every question over the cycles
        for shift in range(len(ABDUCTION_TARGETS)):
            kind, literal = ABDUCTION_TARGETS[(index + shift) % len(ABDUCTION_TARGETS)]
            for top in hole_tops(kind, literal, turn):
                item = self._attempt(rng, lambda r, k=kind, lit=literal, t=top: self._draw_hole(r, k, lit, t))
                if item is not None:
                    return item
        raise RuntimeError(f"geo: no valid abduction hole for index {index}")

    def _draw_hole(self, rng: random.Random, kind: str, literal: Any, top: str) -> Any:
        """A program asking `top` with `literal` put in one of its `kind` slots, valid, and identified by it (no
        other candidate of the kind gives the same value, so a constant answer passes only where it is the hole's
        own literal)."""
        base = _hole_program(rng, kind, literal, self.scenes.classes, top) if rng.random() < 0.6 else None
        base = base or random_program(rng, self.scenes.classes, top)
        slots = [path for path, k in literal_slots(base) if k == kind]
        if not slots:
            return None
        path = tuple(rng.choice(slots))
        program = substitute(base, path, literal)
        scene_seed = rng.randrange(2**31)
        if not self._in_split("abduction", scene_seed, program):
            return _OUT
        scene = self.scenes.scene(scene_seed)
        found = valid_task(program, scene, self.scenes, self.robust_to)
        if found is None:
            return None
        unit = unit_of(program, found[1])
        for other in CANDIDATES[kind]:
            seen = outcome(substitute(program, path, other), scene) if other != literal else None
            if seen is not None and dsl.answers_equal(unit, found[0], seen):
                return None
        hole = {"path": list(path), "kind": kind, "answer": literal, "shown": substitute(program, path, HOLE)}
        return {"scene_seed": scene_seed, "program": program, "value": found[0], "unit": unit, "hole": hole}

    def _make_induction(self, index: int, rng: random.Random) -> dict[str, Any]:
        """A program with at least one filter or spatial restriction (the bare `count(objects(c))` family is small
        enough that a constant program would match many tasks), varying over the examples, with no simpler twin.

        Slots cycle over (answer kind, first class the program reads), so no program family fills more than one
        slot in `len(INDUCTION_KINDS) * classes`: the most common program stays rare (a constant program's cap)."""
        slots = [(kind, cls) for kind in INDUCTION_KINDS for cls in self._movable()]
        for shift in range(len(slots)):
            kind, cls = slots[(index + shift) % len(slots)]
            item = self._attempt(rng, lambda r, k=kind, c=cls: self._draw_examples(r, k, c), budget=TARGET_DRAWS * 5)
            if item is not None:
                return item
        raise RuntimeError(f"geo: no valid induction program for index {index}")

    def _movable(self) -> list[str]:
        return [c for c in self.scenes.classes if c != "road"] or list(self.scenes.classes)

    def _draw_examples(self, rng: random.Random, kind: str, cls: str) -> Any:
        """A restricted program whose first class read is `cls`, valid on 5 scenes (3 shown, 2 held out) with at
        least 2 different answers among the shown ones (so it is not constant: no separate probe batch needed)."""
        for _ in range(200):  # programs are cheap to draw: only those that fit the slot cost scene builds
            program = random_program(rng, self.scenes.classes, kind)
            if program_classes(program)[:1] == [cls] and _restriction_paths(program):
                break
        else:
            return None
        seeds = [rng.randrange(2**31) for _ in range(5)]
        if not self._in_split(self.mode, seeds[0], program):
            return _OUT
        found = []
        for seed in seeds:
            value = valid_task(program, self.scenes.scene(seed), robust_to=self.robust_to)
            if value is None:
                return None
            found.append(value)
        values = [v[0] for v in found]
        unit = unit_of(program, found[0][1])
        if len({format_answer(v) for v in values[:3]}) < 2 or self._has_simpler_twin(program, seeds, values, unit):
            return None
        return {"scene_seed": seeds[0], "program": program, "value": values[0], "unit": unit, "seeds": seeds,
                "values": values}  # fmt: skip

    def _has_simpler_twin(self, program: Any, seeds: list[int], values: list[Any], unit: str) -> bool:
        """Whether a simpler program gives the same answers on every scene: one of its filters/restrictions dropped
        (a no-op, e.g. `area_lt 400` on trees) or a bare `count|total_area(objects(c))`. Such a task would be
        passed by that simpler program, and many tasks would share it: a constant program would score."""
        twins = [substitute(program, path, get(program, (*path, 1))) for path in _restriction_paths(program)]
        twins += [[op, ["objects", c]] for op in ("count", "total_area") for c in self.scenes.classes]
        scenes = [self.scenes.scene(seed) for seed in seeds]
        for twin in twins:
            seen = [outcome(twin, scene) for scene in scenes]
            if all(s is not None and dsl.answers_equal(unit, v, s) for s, v in zip(seen, values, strict=True)):
                return True
        return False

    def _make(self, index: int, rng: random.Random) -> dict[str, Any]:
        make = {"deduction": self._make_deduction, "abduction": self._make_abduction}.get(self.mode)
        return make(index, rng) if make else self._make_induction(index, rng)

    def _scene_parts(self, seed: int, caption: str) -> list[ContentPart]:
        scene = self.scenes.scene(seed)
        side = round(scene.size * scene.px_per_m)
        where = f"{caption} an aerial tile of {scene.size:g} x {scene.size:g} m (x east, y south, north up)"
        if self.render == "image":
            text = f"{where}, shown as a {side} x {side} px image ({scene.px_per_m:g} px per metre):"
            return [
                ContentPart(type="text", text=text),
                ContentPart(type="image_url", image_url={"url": scene.data_url()}),
            ]
        if self.render == "text":
            return [ContentPart(type="text", text=f"{where}.\n{scene.to_text()}")]
        return [ContentPart(type="text", text=f"{where}; call the perception tool to see what is in it.")]

    def _perception_calls(self, program: Any) -> list[str]:
        """The tools env's oracle asks the perception tool about every class its program reads, then answers."""
        return [f"segment({cls})" for cls in program_classes(program)] if self.tools else []

    def task(self, index: int) -> Task:
        item = self.draw(
            index,
            lambda rng: self._make(index, rng),
            lambda it: f"{self.mode}|{it['scene_seed']}|{json.dumps(it['program'])}",
        )
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
                    item["seeds"][k], f"Example {k + 1} (answer {format_answer(item['values'][k])}):"
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
            reference_actions=[*self._perception_calls(item["program"]), f"ANSWER: {answer}"],
            difficulty=min(5, max(1, _depth(item["program"]) - 1 + (self.mode == "induction"))),
            mode=self.mode,
            scene_source=self.scenes.name,
            render=self.render,
        )
