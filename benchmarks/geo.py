"""GeoX timings vs baselines measured in the same run.

- scene generation + PNG render vs a plain Pillow blank-canvas draw + PNG encode of the same size;
- DSL interpretation (parse + typecheck + run) vs a hand-written Python function computing the same answer.
Prints a table and one JSON line.
"""

from __future__ import annotations

import io
import json
import time

from PIL import Image

from rlvr_gym.envs.geo import dsl
from rlvr_gym.envs.geo.scene import SIZE, _procedural

PROGRAM = '["distance", ["largest", ["objects", "building"]], ["nearest", ["largest", ["objects", "building"]], ["objects", "tree"]]]'


def per_call(fn, n: int) -> float:
    start = time.perf_counter()
    for i in range(n):
        fn(i)
    return (time.perf_counter() - start) / n


def blank_canvas(_: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (SIZE, SIZE), (0, 0, 0)).save(buffer, format="PNG")
    return buffer.getvalue()


def scene_and_render(i: int) -> bytes:
    _procedural.cache_clear()
    return _procedural(10_000 + i).render_png()


def hand_written(scene) -> float:
    building = max(scene.of_class("building"), key=lambda o: o.area)
    bx, by = building.centroid
    return min(((o.centroid[0] - bx) ** 2 + (o.centroid[1] - by) ** 2) ** 0.5 for o in scene.of_class("tree"))


def main() -> None:
    n = 200
    scenes = [_procedural(20_000 + i) for i in range(n)]
    render = per_call(scene_and_render, n)
    blank = per_call(blank_canvas, n)

    def interpret(i: int):
        try:
            return dsl.evaluate(PROGRAM, scenes[i])
        except dsl.ProgramError:
            return None

    dsl_time = per_call(interpret, n)
    python_time = per_call(lambda i: hand_written(scenes[i]), n)
    result = {
        "bench": "geo",
        "scene_render_ms": round(render * 1e3, 3),
        "blank_canvas_ms": round(blank * 1e3, 3),
        "render_ratio": round(render / blank, 2),
        "dsl_eval_ms": round(dsl_time * 1e3, 4),
        "python_fn_ms": round(python_time * 1e3, 4),
        "dsl_ratio": round(dsl_time / python_time, 2),
    }
    print(
        f"scene+render {result['scene_render_ms']} ms vs blank canvas {result['blank_canvas_ms']} ms "
        f"({result['render_ratio']}x)"
    )
    print(f"DSL eval {result['dsl_eval_ms']} ms vs hand-written {result['python_fn_ms']} ms ({result['dsl_ratio']}x)")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
