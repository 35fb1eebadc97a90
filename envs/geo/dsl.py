"""The spatial DSL: typed programs as JSON lists, a type checker and a bounded interpreter.

Programs are parsed with bounded `json.loads` (size cap first, then a depth/node walk); model text is never
evaluated as Python. Types: set (of objects), obj, region (a shapely geometry), pred (an object test for `filter`),
num, dir (compass point), cls (class name), str (attribute value), bool (yes/no). An argument type may list
alternatives ("obj|region"); "lit:<kind>" arguments are JSON literals checked by `literal_ok`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from .scene import ATTRIBUTE_KEYS, CLASSES, COLOUR_NAMES, GeoObject, Scene

MAX_CHARS = 2000
MAX_DEPTH = 6
MAX_NODES = 20
MAX_LITERAL = 100_000  # metres / m2 literals
TIE_MARGIN = 0.05  # relative gap the top two of an argmin/argmax or a comparison must clear
DIRECTIONS = ("E", "NE", "N", "NW", "W", "SW", "S", "SE")
QUADRANTS = ("NW", "NE", "SW", "SE", "center")
UNITS = {"count": "count", "total_area": "m2", "area": "m2", "distance": "m", "length": "m"}
ANSWER_TYPES = ("num", "dir", "cls", "str", "bool")  # what a task's program may return (sets/regions are not answers)

SIGNATURES: dict[str, tuple[tuple[str, ...], str]] = {
    # sets
    "objects": (("lit:cls",), "set"),
    "filter": (("set", "pred"), "set"),
    "within": (("set", "lit:quadrant|region"), "set"),
    "near": (("set", "obj|region", "lit:num"), "set"),
    # predicates for filter
    "area_gt": (("lit:num",), "pred"),
    "area_lt": (("lit:num",), "pred"),
    "color_is": (("lit:color",), "pred"),
    "touches": (("region",), "pred"),
    # regions
    "buffer": (("obj|set|region", "lit:num"), "region"),
    "union": (("set",), "region"),
    "intersect": (("region", "region"), "region"),
    "quadrant": (("lit:quadrant",), "region"),
    "tile": ((), "region"),
    # numbers
    "count": (("set",), "num"),
    "total_area": (("set",), "num"),
    "area": (("obj|region",), "num"),
    "length": (("set",), "num"),
    "distance": (("obj", "obj"), "num"),
    # objects
    "largest": (("set",), "obj"),
    "smallest": (("set",), "obj"),
    "nearest": (("obj", "set"), "obj"),
    "farthest": (("obj", "set"), "obj"),
    "argmax_count_near": (("set", "set", "lit:num"), "obj"),
    # answers
    "direction": (("obj", "obj"), "dir"),
    "class_of": (("obj",), "cls"),
    "attr": (("obj", "lit:key"), "str"),
    "exists": (("set",), "bool"),
    "gt": (("num", "num"), "bool"),
    "lt": (("num", "num"), "bool"),
    "eq": (("num", "num"), "bool"),
}
LITERALS: dict[str, tuple[Any, ...]] = {
    "cls": CLASSES,
    "quadrant": QUADRANTS,
    "color": COLOUR_NAMES,
    "key": ATTRIBUTE_KEYS,
}


class ProgramError(ValueError):
    """A typed reason a program is rejected: kind in {non_json, too_large, malformed, type_error, runtime}."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind


def parse(text: str) -> Any:
    """Bounded parse: size cap before json.loads, then the depth/node caps."""
    if len(text) > MAX_CHARS:
        raise ProgramError("too_large", f"program text over {MAX_CHARS} characters")
    if text.count("[") > MAX_NODES * 2:
        raise ProgramError("too_large", "too many nested lists")
    try:
        program = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ProgramError("non_json", str(exc)[:200]) from None
    _check_size(program)
    return program


def _check_size(program: Any) -> None:
    stack, nodes = [(program, 1)], 0
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if depth > MAX_DEPTH or nodes > MAX_NODES:
            raise ProgramError("too_large", f"program exceeds depth {MAX_DEPTH} or {MAX_NODES} nodes")
        if isinstance(node, list):
            stack.extend((child, depth + 1) for child in node)


def literal_ok(kind: str, value: Any) -> bool:
    if kind == "num":
        return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= MAX_LITERAL
    return isinstance(value, str) and value in LITERALS[kind]


def literal_kind(want: str) -> str | None:
    """The literal kind an argument slot accepts ("lit:quadrant|region" -> "quadrant"), if any."""
    return next((alt[4:] for alt in want.split("|") if alt.startswith("lit:")), None)


def typecheck(program: Any) -> str:
    """The result type of a well-typed program; raises ProgramError otherwise."""
    if not isinstance(program, list) or not program or not isinstance(program[0], str):
        raise ProgramError("malformed", "a program is a non-empty JSON list starting with an operator name")
    op, args = program[0], program[1:]
    if op not in SIGNATURES:
        raise ProgramError("type_error", f"unknown operator {op[:40]!r}")
    arg_types, result = SIGNATURES[op]
    if len(args) != len(arg_types):
        raise ProgramError("type_error", f"{op} takes {len(arg_types)} arguments, got {len(args)}")
    for want, arg in zip(arg_types, args, strict=True):
        kind = literal_kind(want)
        if not isinstance(arg, list):
            if kind is None or not literal_ok(kind, arg):
                raise ProgramError("type_error", f"{op}: bad {kind or want} literal")
        elif typecheck(arg) not in want.split("|"):
            raise ProgramError("type_error", f"{op}: expected a {want} argument")
    return result


# ---- interpreter ------------------------------------------------------------------------------------------------


def _distance(a: GeoObject, b: GeoObject) -> float:
    return math.dist(a.centroid, b.centroid)


def _bearing(a: GeoObject, b: GeoObject) -> float:
    """Degrees counter-clockwise from east of b as seen from a (image y grows south)."""
    (ax, ay), (bx, by) = a.centroid, b.centroid
    return math.degrees(math.atan2(ay - by, bx - ax)) % 360


def _quadrant_box(quadrant: str, size: float) -> tuple[float, float, float, float]:
    half = size / 2
    if quadrant == "center":
        return (size / 4, size / 4, 3 * size / 4, 3 * size / 4)
    x0 = half if quadrant[1] == "E" else 0.0
    y0 = 0.0 if quadrant[0] == "N" else half
    return (x0, y0, x0 + half, y0 + half)


def _in_quadrant(o: GeoObject, quadrant: str, size: float) -> bool:
    x, y = o.centroid
    x0, y0, x1, y1 = _quadrant_box(quadrant, size)
    return x0 <= x < x1 and y0 <= y < y1


def _unique_best(items: list[GeoObject], key: Callable[[GeoObject], float], op: str) -> GeoObject:
    """argmin of key; an empty set or a top-two gap under TIE_MARGIN is a runtime error (not deterministic)."""
    if not items:
        raise ProgramError("runtime", f"{op} of an empty set")
    ranked = sorted(items, key=lambda o: (key(o), o.id))
    if len(ranked) > 1 and abs(key(ranked[1]) - key(ranked[0])) < TIE_MARGIN * max(abs(key(ranked[0])), 1.0):
        raise ProgramError("runtime", f"{op}: near-tie")
    return ranked[0]


def _shape(value: Any):
    """Any obj / set / region argument as one shapely geometry."""
    from shapely.ops import unary_union

    if isinstance(value, GeoObject):
        return value.geometry
    if isinstance(value, list):
        if not value:
            raise ProgramError("runtime", "region of an empty set")
        return unary_union([o.geometry for o in value])
    return value


def _point(o: GeoObject):
    from shapely.geometry import Point

    return Point(*o.centroid)


def _compare(op: str, a: float, b: float) -> str:
    """yes/no for gt, lt, eq; a gap under TIE_MARGIN (but not an exact equality) is a near-tie."""
    gap = abs(a - b)
    if gap != 0 and gap < TIE_MARGIN * max(abs(a), abs(b), 1.0):
        raise ProgramError("runtime", f"{op}: near-tie")
    truth = {"gt": a > b, "lt": a < b, "eq": gap == 0}[op]
    return "yes" if truth else "no"


def _box(x0: float, y0: float, x1: float, y1: float):
    from shapely.geometry import box

    return box(x0, y0, x1, y1)


def _pred(program: list[Any], scene: Scene) -> Callable[[GeoObject], bool]:
    op, args = program[0], program[1:]
    if op == "area_gt":
        return lambda o: o.area > args[0]
    if op == "area_lt":
        return lambda o: o.area < args[0]
    if op == "color_is":
        return lambda o: o.attr("color") == args[0]
    region = run(args[0], scene)
    return lambda o: bool(o.geometry.intersects(region))


def run(program: Any, scene: Scene) -> Any:
    """Evaluate a well-typed program; raises ProgramError("runtime") on empty sets, near-ties or missing attributes."""
    op, args = program[0], program[1:]
    if op in ("area_gt", "area_lt", "color_is", "touches"):
        return _pred(program, scene)
    if op == "objects":
        return scene.of_class(args[0])
    if op == "filter":
        keep = run(args[1], scene)
        return [o for o in run(args[0], scene) if keep(o)]
    if op == "within":
        if isinstance(args[1], str):
            return [o for o in run(args[0], scene) if _in_quadrant(o, args[1], scene.size)]
        region = run(args[1], scene)
        return [o for o in run(args[0], scene) if region.covers(_point(o))]
    if op == "near":
        anchor = run(args[1], scene)
        if isinstance(anchor, GeoObject):
            return [o for o in run(args[0], scene) if o.id != anchor.id and _distance(o, anchor) <= args[2]]
        return [o for o in run(args[0], scene) if anchor.distance(_point(o)) <= args[2]]
    if op == "buffer":
        return _shape(run(args[0], scene)).buffer(args[1], quad_segs=16)
    if op == "union":
        return _shape(run(args[0], scene))
    if op == "intersect":
        return run(args[0], scene).intersection(run(args[1], scene))
    if op == "quadrant":
        return _box(*_quadrant_box(args[0], scene.size))
    if op == "tile":
        return _box(0.0, 0.0, scene.size, scene.size)
    if op == "count":
        return len(run(args[0], scene))
    if op == "total_area":
        return sum(o.area for o in run(args[0], scene))
    if op == "area":
        value = run(args[0], scene)
        return value.area if isinstance(value, GeoObject) else float(value.area)
    if op == "length":
        return sum(o.length for o in run(args[0], scene))
    if op == "distance":
        return _distance(run(args[0], scene), run(args[1], scene))
    if op in ("largest", "smallest"):
        sign = -1 if op == "largest" else 1
        return _unique_best(run(args[0], scene), lambda o: sign * o.area, op)
    if op in ("nearest", "farthest"):
        anchor = run(args[0], scene)
        others = [o for o in run(args[1], scene) if o.id != anchor.id]
        sign = 1 if op == "nearest" else -1
        return _unique_best(others, lambda o: sign * _distance(anchor, o), op)
    if op == "argmax_count_near":
        targets = run(args[1], scene)

        def neighbours(o: GeoObject) -> float:
            return -sum(1 for t in targets if t.id != o.id and _distance(o, t) <= args[2])

        return _unique_best(run(args[0], scene), neighbours, op)  # equal counts are a tie
    if op == "direction":
        angle = _bearing(run(args[0], scene), run(args[1], scene))
        offset = (angle + 22.5) % 45
        if min(offset, 45 - offset) < 5:
            raise ProgramError("runtime", "direction: bearing too close to a sector boundary")
        return DIRECTIONS[int(((angle + 22.5) % 360) // 45)]
    if op == "class_of":
        return run(args[0], scene).cls
    if op == "attr":
        value = run(args[0], scene).attr(args[1])
        if value is None:
            raise ProgramError("runtime", f"attr: the object has no {args[1]!r}")
        return value
    if op == "exists":
        return "yes" if run(args[0], scene) else "no"
    if op in ("gt", "lt", "eq"):
        return _compare(op, run(args[0], scene), run(args[1], scene))
    raise ProgramError("type_error", f"unknown operator {op!r}")


def check(program: Any) -> str:
    """The result type of a program within the size limits and well-typed; raises ProgramError otherwise (what
    `evaluate` checks before it looks at a scene)."""
    _check_size(program)
    return typecheck(program)


def evaluate(text_or_program: Any, scene: Scene) -> tuple[Any, str]:
    """Parse (if text), typecheck and run; returns (value, type). Every failure is a typed ProgramError: a
    geometry library error or a non-finite number on some well-typed program is a runtime error of that
    program, never an exception out of a verifier."""
    program = parse(text_or_program) if isinstance(text_or_program, str) else text_or_program
    kind = check(program)
    try:
        value = run(program, scene)
    except ProgramError:
        raise
    except (ArithmeticError, ValueError, TypeError, LookupError, AttributeError, RecursionError, MemoryError) as exc:
        raise ProgramError("runtime", f"{type(exc).__name__}: {str(exc)[:120]}") from None
    except Exception as exc:  # shapely's GEOSException and kin, which share no narrower base
        raise ProgramError("runtime", f"geometry: {type(exc).__name__}") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise ProgramError("runtime", "a non-finite number")
    return value, kind


def tolerance(unit: str, expected: float) -> float:
    """Spec tolerances: counts exact; distances max(5%, 2 m); areas max(5%, 10 m2)."""
    if unit == "count":
        return 0.0
    return max(0.05 * abs(expected), 2.0 if unit == "m" else 10.0)


def answers_equal(unit: str, expected: Any, given: Any) -> bool:
    if unit in UNITS.values():
        return isinstance(given, (int, float)) and abs(given - expected) <= tolerance(unit, expected)
    return given == expected
