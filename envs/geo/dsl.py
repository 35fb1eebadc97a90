"""The spatial DSL: typed programs as JSON lists, a type checker and a bounded interpreter.

Programs are parsed with bounded `json.loads` (size cap first, then a depth/node walk); model text is never
evaluated as Python. Types: set (of objects), obj, num, dir (compass point), cls (class name), bool.
"""

from __future__ import annotations

import json
import math
from typing import Any

from .scene import CLASSES, SIZE, GeoObject, Scene

MAX_CHARS = 2000
MAX_DEPTH = 6
MAX_NODES = 20
DIRECTIONS = ("E", "NE", "N", "NW", "W", "SW", "S", "SE")
QUADRANTS = ("NW", "NE", "SW", "SE", "center")
UNITS = {"count": "count", "total_area": "m2", "area": "m2", "distance": "m"}

# op -> (argument types, result type); "lit:<kind>" arguments are literals checked by `_literal_ok`.
SIGNATURES: dict[str, tuple[tuple[str, ...], str]] = {
    "objects": (("lit:cls",), "set"),
    "within": (("set", "lit:quadrant"), "set"),
    "near": (("set", "obj", "lit:num"), "set"),
    "count": (("set",), "num"),
    "total_area": (("set",), "num"),
    "largest": (("set",), "obj"),
    "nearest": (("obj", "set"), "obj"),
    "area": (("obj",), "num"),
    "distance": (("obj", "obj"), "num"),
    "direction": (("obj", "obj"), "dir"),
    "class_of": (("obj",), "cls"),
    "gt": (("num", "num"), "bool"),
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


def _literal_ok(kind: str, value: Any) -> bool:
    if kind == "cls":
        return value in CLASSES
    if kind == "quadrant":
        return value in QUADRANTS
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= SIZE * 2


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
        if want.startswith("lit:"):
            if not _literal_ok(want[4:], arg):
                raise ProgramError("type_error", f"{op}: bad {want[4:]} literal")
        elif typecheck(arg) != want:
            raise ProgramError("type_error", f"{op}: expected a {want} argument")
    return result


def _distance(a: GeoObject, b: GeoObject) -> float:
    (ax, ay), (bx, by) = a.centroid, b.centroid
    return math.hypot(ax - bx, ay - by)


def _bearing(a: GeoObject, b: GeoObject) -> float:
    """Degrees counter-clockwise from east of b as seen from a (image y grows south)."""
    (ax, ay), (bx, by) = a.centroid, b.centroid
    return math.degrees(math.atan2(ay - by, bx - ax)) % 360


def _in_quadrant(o: GeoObject, quadrant: str) -> bool:
    x, y = o.centroid
    if quadrant == "center":
        return SIZE / 4 <= x < 3 * SIZE / 4 and SIZE / 4 <= y < 3 * SIZE / 4
    return (y < SIZE / 2) == (quadrant[0] == "N") and (x >= SIZE / 2) == (quadrant[1] == "E")


def _unique_best(items: list[GeoObject], key, op: str, margin: float) -> GeoObject:
    if not items:
        raise ProgramError("runtime", f"{op} of an empty set")
    ranked = sorted(items, key=key)
    if len(ranked) > 1 and abs(key(ranked[1]) - key(ranked[0])) < margin * max(abs(key(ranked[0])), 1.0):
        raise ProgramError("runtime", f"{op}: near-tie")
    return ranked[0]


def run(program: Any, scene: Scene) -> Any:
    """Evaluate a well-typed program; raises ProgramError("runtime") on empty sets or near-ties."""
    op, args = program[0], program[1:]
    if op == "objects":
        return scene.of_class(args[0])
    if op == "within":
        return [o for o in run(args[0], scene) if _in_quadrant(o, args[1])]
    if op == "near":
        anchor = run(args[1], scene)
        return [o for o in run(args[0], scene) if o.id != anchor.id and _distance(o, anchor) <= args[2]]
    if op == "count":
        return len(run(args[0], scene))
    if op == "total_area":
        return sum(o.area for o in run(args[0], scene))
    if op == "largest":
        return _unique_best(run(args[0], scene), lambda o: -o.area, op, 0.05)
    if op == "nearest":
        anchor = run(args[0], scene)
        others = [o for o in run(args[1], scene) if o.id != anchor.id]
        return _unique_best(others, lambda o: _distance(anchor, o), op, 0.05)
    if op == "area":
        return run(args[0], scene).area
    if op == "distance":
        return _distance(run(args[0], scene), run(args[1], scene))
    if op == "direction":
        angle = _bearing(run(args[0], scene), run(args[1], scene))
        offset = (angle + 22.5) % 45
        if min(offset, 45 - offset) < 5:
            raise ProgramError("runtime", "direction: bearing too close to a sector boundary")
        return DIRECTIONS[int(((angle + 22.5) % 360) // 45)]
    if op == "class_of":
        return run(args[0], scene).cls
    if op == "gt":
        a, b = run(args[0], scene), run(args[1], scene)
        if abs(a - b) < 0.05 * max(abs(a), abs(b), 1.0):
            raise ProgramError("runtime", "greater: near-tie")
        return "yes" if a > b else "no"
    raise ProgramError("type_error", f"unknown operator {op!r}")


def evaluate(text_or_program: Any, scene: Scene) -> tuple[Any, str]:
    """Parse (if text), typecheck and run; returns (value, type)."""
    program = parse(text_or_program) if isinstance(text_or_program, str) else text_or_program
    _check_size(program)
    kind = typecheck(program)
    return run(program, scene), kind


def tolerance(unit: str, expected: float) -> float:
    """Spec tolerances: counts exact; distances max(5%, 2 m); areas max(5%, 10 m2)."""
    if unit == "count":
        return 0.0
    return max(0.05 * abs(expected), 2.0 if unit == "m" else 10.0)


def answers_equal(unit: str, expected: Any, given: Any) -> bool:
    if unit in UNITS.values():
        return isinstance(given, (int, float)) and abs(given - expected) <= tolerance(unit, expected)
    return given == expected
