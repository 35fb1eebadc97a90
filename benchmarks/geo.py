"""GeoX timings vs baselines measured in the same run.

- scene build + PNG render per source (procedural, osm, neon when set up) vs a Pillow blank-canvas PNG of the same
  size (the floor any renderer pays for encoding);
- DSL interpretation (parse + typecheck + run) vs a hand-written Python function computing the same answer, and a
  region-algebra program (buffer + within, shapely) on the same scenes;
- ColorSeg (numpy threshold + run-length components) per class per scene.
Prints a table and one JSON line.

`--baselines N` instead measures the blind baselines of every GeoX mode (`envs/geo/baselines.py`) on N eval tasks
(majority and constant fitted on N train tasks) and prints the markdown tables of docs/results/geo.md: pass rates
with 95% Wilson intervals, and the question mix.
"""

from __future__ import annotations

import argparse
import io
import json
import time

from PIL import Image

from rlvr_gym.envs.geo import baselines, dsl
from rlvr_gym.envs.geo.perception import ColorSegmenter
from rlvr_gym.envs.geo.sources import SOURCES

PROGRAM = '["distance", ["largest", ["objects", "building"]], ["nearest", ["largest", ["objects", "building"]], ["objects", "tree"]]]'
REGION_PROGRAM = '["count", ["within", ["objects", "tree"], ["buffer", ["largest", ["objects", "building"]], 30]]]'


def per_call(fn, n: int) -> float:
    start = time.perf_counter()
    for i in range(n):
        fn(i)
    return (time.perf_counter() - start) / n


def blank_canvas(side: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (side, side), (0, 0, 0)).save(buffer, format="PNG")
    return buffer.getvalue()


def hand_written(scene) -> float:
    building = max(scene.of_class("building"), key=lambda o: o.area)
    bx, by = building.centroid
    return min(((o.centroid[0] - bx) ** 2 + (o.centroid[1] - by) ** 2) ** 0.5 for o in scene.of_class("tree"))


def quiet(program: str, scene):
    try:
        return dsl.evaluate(program, scene)
    except dsl.ProgramError:
        return None


def main() -> None:
    n = 100
    result: dict[str, float | str] = {"bench": "geo"}
    for name, source in SOURCES.items():
        if source.available() is not None:
            print(f"{name}: skipped ({source.available()})")
            continue
        count = n if name == "procedural" else 20
        first = source.build(0)
        side = round(first.size * first.px_per_m)
        render = per_call(lambda i, s=source: s.build(10_000 + i).render_png(), count)
        blank = per_call(lambda i, s=side: blank_canvas(s), count)
        result[f"{name}_scene_render_ms"] = round(render * 1e3, 2)
        result[f"{name}_render_ratio_vs_blank"] = round(render / blank, 2)
        print(f"{name}: build+render {render * 1e3:.1f} ms vs blank {side}px canvas {blank * 1e3:.2f} ms")
    scenes = [SOURCES["procedural"].scene(20_000 + i) for i in range(n)]
    dsl_time = per_call(lambda i: quiet(PROGRAM, scenes[i]), n)
    python_time = per_call(lambda i: hand_written(scenes[i]), n)
    region_time = per_call(lambda i: quiet(REGION_PROGRAM, scenes[i]), n)
    seg_time = per_call(lambda i: ColorSegmenter().segment(scenes[i], "building"), 30)
    result.update(
        dsl_eval_ms=round(dsl_time * 1e3, 4),
        python_fn_ms=round(python_time * 1e3, 4),
        dsl_ratio=round(dsl_time / python_time, 2),
        region_program_ms=round(region_time * 1e3, 3),
        colorseg_ms=round(seg_time * 1e3, 2),
    )
    print(f"DSL eval {dsl_time * 1e3:.3f} ms vs hand-written {python_time * 1e3:.4f} ms ({result['dsl_ratio']}x)")
    print(f"region program (buffer + within) {region_time * 1e3:.3f} ms; ColorSeg one class {seg_time * 1e3:.1f} ms")
    print(json.dumps(result))


BASELINE_MODES = {  # row name -> GeoTasks kwargs (the env that shows them)
    "deduction (GeoX-v0)": {},
    "abduction (GeoX-Abduction-v0)": {"mode": "abduction"},
    "induction (GeoX-Induction-v0)": {"mode": "induction"},
    "tools (GeoX-Tools-v0, ColorSeg)": {"robust_to": "colorseg", "render": "none", "tools": True},
    "deduction on OSM (GeoX-OSM-v0)": {"source": "osm"},
}


def baseline_tables(n: int, only: list[str] | None = None) -> None:
    """Markdown rows: oracle, constant, majority, kind prior, random per mode; then the question mix per mode."""
    print("| mode | n | oracle | constant | majority | kind prior | random | constant / majority answer |")
    print("|---|---|---|---|---|---|---|---|")
    mixes = {}
    for name, kwargs in BASELINE_MODES.items():
        if only and not any(word in name for word in only):
            continue
        start = time.perf_counter()
        r = baselines.measure(n, **kwargs)
        cells = " | ".join(str(r[k]) for k in ("oracle", "constant", "majority", "kind_prior", "random"))
        answers = f"`{r['constant_answer'][:40]}` / `{r['majority_answer'][:40]}`"
        print(f"| {name} | {n} | {cells} | {answers} |  <!-- {time.perf_counter() - start:.0f} s -->", flush=True)
        mixes[name] = r["mix"]
    for name, mix in mixes.items():
        print(
            f"\n{name}: "
            + "; ".join(f"{k}: " + ", ".join(f"{op} {c}" for op, c in v.most_common()) for k, v in mix.items())
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baselines", type=int, default=0, help="eval tasks per mode (0: the timing benchmark)")
    parser.add_argument("--only", nargs="*", help="modes whose row name contains one of these words")
    args = parser.parse_args()
    if args.baselines:
        baseline_tables(args.baselines, args.only)
    else:
        main()
