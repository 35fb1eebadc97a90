"""Procedural aerial-like scenes with exact per-object ground truth, behind a `SceneSource` interface.

Objects are rectangles, rotated polygons and buffered centre-lines (shapely geometry) and discs (trees), so areas,
centroids and distances are exact; the rendered image is only a view of that ground truth.
"""

from __future__ import annotations

import base64
import io
import math
import random
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from rlvr_gym.family import stable_seed

SIZE = 256
CLASSES = ("road", "water", "building", "tree", "vehicle")
BACKGROUND = (120, 150, 90)
# class -> colour name -> RGB. Buildings and vehicles vary (the `color` attribute); the first entry is the default.
COLOURS: dict[str, dict[str, tuple[int, int, int]]] = {
    "road": {"grey": (90, 90, 90)},
    "water": {"blue": (40, 90, 200)},
    "building": {"orange": (200, 120, 80), "grey": (160, 160, 170), "white": (235, 235, 225), "brown": (130, 80, 50)},
    "tree": {"green": (20, 100, 30)},
    "vehicle": {"yellow": (240, 230, 40), "red": (210, 30, 30), "blue": (30, 60, 240), "black": (20, 20, 20)},
}
COLOUR_NAMES = tuple(sorted({name for palette in COLOURS.values() for name in palette}))
ATTRIBUTE_KEYS = ("color", "shape", "label")


class cached_attribute:  # noqa: N801  (a decorator, spelled like the property it replaces)
    """`functools.cached_property` without its lock. On Python 3.11 that lock is one per class attribute, shared by
    every instance, so a thread computing one object's `centroid` (which reads `geometry`) and another computing a
    disc's `geometry` (which reads `centroid`) wait on each other forever. Computing a value twice in a race is
    harmless: it is a pure function of the frozen object."""

    def __init__(self, func: Callable) -> None:
        self.func, self.name, self.__doc__ = func, func.__name__, func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: object, owner: type | None = None):
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.func(obj)
        return value


@dataclass(frozen=True)
class GeoObject:
    """One object in scene metres (x east, y south); shapes "rect" and "disc" have closed-form area and centroid.

    "poly" (exterior ring in `points`) and "line" (a road centre-line in `points`, `width` metres wide) use shapely.
    `measured` = (area, cx, cy) overrides the geometry for objects seen through a perception tool.
    """

    id: int
    cls: str
    shape: str
    x0: float
    y0: float
    x1: float
    y1: float
    points: tuple[tuple[float, float], ...] = ()
    width: float = 0.0
    attrs: tuple[tuple[str, str], ...] = ()
    measured: tuple[float, float, float] | None = None

    @cached_attribute
    def geometry(self):
        """The shapely geometry (region algebra and polygon measures); imported lazily."""
        from shapely.geometry import LineString, Point, Polygon, box

        if self.shape == "disc":
            return Point(*self.centroid).buffer((self.x1 - self.x0) / 2, quad_segs=16)
        if self.shape == "poly":
            return Polygon(self.points)
        if self.shape == "line":
            return LineString(self.points).buffer(self.width / 2, cap_style="flat")
        return box(self.x0, self.y0, self.x1, self.y1)

    @cached_attribute
    def centroid(self) -> tuple[float, float]:
        if self.measured is not None:
            return self.measured[1], self.measured[2]
        if self.shape in ("poly", "line"):
            point = self.geometry.centroid
            return (point.x, point.y)
        return ((self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2)

    @cached_attribute
    def area(self) -> float:
        if self.measured is not None:
            return self.measured[0]
        w, h = self.x1 - self.x0, self.y1 - self.y0
        if self.shape in ("poly", "line"):
            return float(self.geometry.area)
        return math.pi * (w / 2) ** 2 if self.shape == "disc" else w * h

    @property
    def length(self) -> float:
        """Centre-line length in metres: road lines, or the long side of a rectangular road; 0 for other objects."""
        if self.shape == "line":
            return sum(math.dist(a, b) for a, b in zip(self.points, self.points[1:], strict=False))
        if self.cls == "road" and self.shape == "rect":
            return max(self.x1 - self.x0, self.y1 - self.y0)
        return 0.0

    def attr(self, key: str) -> str | None:
        if key == "shape":
            return self.shape
        return dict(self.attrs).get(key)


@dataclass(frozen=True)
class Scene:
    """Objects plus how to show them: drawn from the objects, or a real photo crop (`photo`: a callable returning the
    PNG bytes, encoded only when the image is shown: task generation builds many scenes it never shows)."""

    source: str
    seed: int
    objects: tuple[GeoObject, ...]
    attribution: str = ""
    size: float = SIZE  # tile extent in metres (square)
    px_per_m: float = 1.0
    photo: Callable[[], bytes] | None = None

    def of_class(self, cls: str) -> list[GeoObject]:
        return [o for o in self.objects if o.cls == cls]

    def to_text(self) -> str:
        """Structured textual rendering for text-only models (x grows east, y grows south, metres)."""
        lines = [f"Scene {self.size:g}x{self.size:g} m (x east, y south). Objects:"]
        for o in self.objects:
            cx, cy = o.centroid
            colour = o.attr("color")
            lines.append(
                f"#{o.id} {o.cls} {o.shape} box=({o.x0:.0f},{o.y0:.0f},{o.x1:.0f},{o.y1:.0f}) "
                f"centre=({cx:.1f},{cy:.1f}) area={o.area:.1f}" + (f" color={colour}" if colour else "")
            )
        if self.attribution:
            lines.append(f"Data: {self.attribution}")
        return "\n".join(lines)

    def render_png(self) -> bytes:
        return _render(self)

    def data_url(self) -> str:
        return "data:image/png;base64," + base64.b64encode(self.render_png()).decode()


def colour_of(o: GeoObject) -> tuple[int, int, int]:
    palette = COLOURS[o.cls]
    return palette.get(o.attr("color") or "", next(iter(palette.values())))


@lru_cache(maxsize=256)
def _render(scene: Scene) -> bytes:
    """PNG of the scene (the photo crop, or the objects drawn in class colours) with attribution in its metadata.

    Ground (water, roads) first, then the shadows of buildings and trees, then vehicles,
    buildings and trees, so a shadow never hides what casts it and a tree crown may cover part of a roof.
    """
    import numpy as np
    from PIL import Image

    if scene.photo is not None:
        return scene.photo()  # photo sources encode their crop with the attribution already
    side = round(scene.size * scene.px_per_m)
    canvas = np.empty((side, side, 3), dtype=np.uint8)
    canvas[:] = BACKGROUND
    k = scene.px_per_m
    ordered = sorted(scene.objects, key=lambda o: DRAW_ORDER.index(o.cls))
    for o in ordered:
        if o.cls in GROUND:
            _paint(canvas, o.geometry, k, colour_of(o))
    from shapely.affinity import translate

    dx, dy = _sun(scene)  # a seeded sun: procedural and OSM layouts alike
    for o in scene.objects:
        if o.cls in ("building", "tree"):
            _paint(canvas, translate(o.geometry, dx, dy), k, SHADOW)
    for o in ordered:
        if o.cls not in GROUND:
            _paint(canvas, o.geometry, k, colour_of(o))
    buffer = io.BytesIO()
    Image.fromarray(canvas).save(buffer, format="PNG", pnginfo=png_info(scene.attribution))
    return buffer.getvalue()


DRAW_ORDER = ("water", "road", "vehicle", "building", "tree")
GROUND = ("water", "road")
SHADOW = (70, 92, 58)  # far from every class colour (ColorSeg's tolerance is 12)


def _sun(scene: Scene) -> tuple[float, float]:
    """The scene's shadow offset in metres (a seeded sun direction and height)."""
    rng = random.Random(stable_seed("geo-sun", scene.seed))
    angle, length = rng.uniform(0, 2 * math.pi), rng.uniform(2.0, 4.5)
    return (length * math.cos(angle), length * math.sin(angle))


def _paint(canvas, geometry, k: float, fill: tuple[int, int, int]) -> None:
    """Fill the pixels whose centre lies in `geometry` (metres; pixel i covers [i, i+1) / k).

    Centre sampling keeps pixel counts unbiased estimates of areas; PIL's polygon fill adds its outline, about a
    pixel ring (+7% on a 20 m roof at 1.6 px/m), more than the 5% area tolerance.
    """
    import numpy as np
    import shapely

    if geometry.is_empty:
        return
    side = canvas.shape[0]
    x0, y0, x1, y1 = geometry.bounds
    i0, j0 = max(0, math.floor(x0 * k)), max(0, math.floor(y0 * k))
    i1, j1 = min(side, math.ceil(x1 * k) + 1), min(side, math.ceil(y1 * k) + 1)
    if i0 >= i1 or j0 >= j1:
        return
    xs, ys = np.meshgrid((np.arange(i0, i1) + 0.5) / k, (np.arange(j0, j1) + 0.5) / k)
    shapely.prepare(geometry)
    canvas[j0:j1, i0:i1][shapely.contains_xy(geometry, xs, ys)] = fill


def png_info(attribution: str):
    from PIL.PngImagePlugin import PngInfo

    info = PngInfo()
    if attribution:
        info.add_text("Attribution", attribution)
    return info


class SceneSource(ABC):
    """Anything that yields scenes by seed (procedural generator, OSM layouts, aerial photos).

    `scene(seed)` goes through one process-wide cache keyed by (source name, seed); subclasses implement `build`,
    a pure function of the seed, so every process sees the same scene.
    """

    name: str = "abstract"
    classes: tuple[str, ...] = CLASSES  # the classes its scenes can contain (task generators draw from these)
    coloured = False  # whether objects carry a `color` attribute (colour questions are asked only then)
    # Whether the same objects recur across scenes (real tiles overlap; OSM trees are identical 3 m discs): then
    # numeric answers cluster, and questions ask for them in narrow geometric bins, not in bins of equal mass.
    recurring = False

    def scene(self, seed: int) -> Scene:
        return _cached_scene(self, seed)

    @abstractmethod
    def build(self, seed: int) -> Scene: ...

    def available(self) -> str | None:
        """None when scenes can be built here, else why not (missing data, with the setup command)."""
        return None


@lru_cache(maxsize=2048)  # a scene is tens of KB at most (photos are encoded lazily); task draws revisit their scenes
def _cached_scene(source: SceneSource, seed: int) -> Scene:
    return source.build(seed)


def _overlaps(a: tuple[float, ...], boxes: list[tuple[float, ...]]) -> bool:
    return any(a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3] for b in boxes)


def _bounds(points: tuple[tuple[float, float], ...]) -> tuple[float, float, float, float]:
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return (min(xs), min(ys), max(xs), max(ys))


def _footprint(rng: random.Random, cx: float, cy: float, w: float, h: float, kind: str, angle: float):
    """A footprint's exterior ring: a rectangle, an L (one corner cut away) or an irregular blob, rotated."""
    if kind == "blob":
        n = rng.randint(6, 9)
        ring = [
            (w / 2 * r * math.cos(t), h / 2 * r * math.sin(t))
            for t, r in sorted(
                (2 * math.pi * (k + rng.uniform(-0.3, 0.3)) / n, rng.uniform(0.7, 1.0)) for k in range(n)
            )
        ]
    elif kind == "L":
        a, b = w * rng.uniform(0.35, 0.6), h * rng.uniform(0.35, 0.6)
        ring = [
            (-w / 2, -h / 2),
            (w / 2, -h / 2),
            (w / 2, h / 2 - b),
            (w / 2 - a, h / 2 - b),
            (w / 2 - a, h / 2),
            (-w / 2, h / 2),
        ]
    else:
        ring = [(-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2)]
    c, s = math.cos(angle), math.sin(angle)
    return tuple((round(cx + x * c - y * s, 2), round(cy + x * s + y * c, 2)) for x, y in ring)


TILE_METRES = (192, 256, 320)  # varied scales: every tile is rendered at TILE_PX pixels
TILE_PX = 512


class ProceduralScenes(SceneSource):
    """Seeded aerial-like layouts, 512 px tiles covering 192-320 m (varied scales).

    Roads are centre-lines (straight or bent) of 8-14 m; water bodies irregular polygons; buildings rotated
    rectangles and L-shapes; vehicles rotated rectangles; trees discs whose crowns may cover a roof (occlusion).
    Buildings and trees cast shadows in the render (a scene-wide sun offset, a colour no class uses), so the pixels
    are not the objects: perception has to separate them. Ground truth stays exact (shapely geometry).
    """

    name = "procedural"
    coloured = True

    def build(self, seed: int) -> Scene:
        rng = random.Random(stable_seed("geo-scene", seed))
        paint = random.Random(stable_seed("geo-colour", seed))  # own stream: colours never move the layout
        size = float(rng.choice(TILE_METRES))
        scale = (size / SIZE) ** 2  # object counts grow with the tile's area
        boxes: list[tuple[float, ...]] = []  # everything placed (with margins)
        roofs: list[tuple[float, ...]] = []  # buildings: a tree crown may overlap these
        objects: list[GeoObject] = []

        def add(cls: str, shape: str, box: tuple[float, ...], **geometry) -> None:
            colour = paint.choice(sorted(COLOURS[cls]))
            objects.append(
                GeoObject(len(objects), cls, shape, *map(float, box), attrs=(("color", colour),), **geometry)
            )

        def place(cls: str, w: float, h: float, kind: str, tries: int = 40, margin: float = 2.0) -> None:
            for _ in range(tries):
                angle = 0.0 if kind == "disc" else rng.uniform(0, math.pi)
                c, s = abs(math.cos(angle)), abs(math.sin(angle))
                hx, hy = (w * c + h * s) / 2, (w * s + h * c) / 2  # the rotated w x h box's half extents
                cx, cy = rng.uniform(hx, size - hx), rng.uniform(hy, size - hy)
                grown = (cx - hx - margin, cy - hy - margin, cx + hx + margin, cy + hy + margin)
                occluding = cls == "tree" and rng.random() < 0.3  # a crown over a roof
                if _overlaps(grown, [b for b in boxes if not (occluding and b in roofs)]):
                    continue
                boxes.append(grown)
                if cls == "building":
                    roofs.append(grown)
                if kind == "disc":
                    add(cls, "disc", (cx - w / 2, cy - w / 2, cx + w / 2, cy + w / 2))
                else:  # the footprint lies inside the rotated box, so the cheap box test above was conservative
                    points = _footprint(rng, cx, cy, w, h, kind, angle)
                    add(cls, "poly", _bounds(points), points=points)
                return

        for _ in range(rng.randint(1, 2)):
            width = float(rng.randint(8, 14))
            a, b, bend = rng.uniform(0.15, 0.85) * size, rng.uniform(0.15, 0.85) * size, rng.uniform(0.3, 0.7) * size
            line = ((0.0, a), (bend, a), (size, b)) if rng.random() < 0.5 else ((a, 0.0), (a, bend), (b, size))
            line = tuple((round(x, 2), round(y, 2)) for x, y in line)
            for p, q in zip(line, line[1:], strict=False):
                x0, y0, x1, y1 = _bounds((p, q))
                boxes.append((x0 - width, y0 - width, x1 + width, y1 + width))
            add("road", "line", _bounds(line), points=line, width=width)
        for _ in range(rng.randint(0, 2)):
            place("water", rng.uniform(25, 70), rng.uniform(25, 70), "blob")
        for _ in range(round(rng.randint(2, 7) * scale)):
            place("building", rng.uniform(10, 30), rng.uniform(10, 30), rng.choice(["rect", "rect", "L"]))
        for _ in range(round(rng.randint(2, 8) * scale)):
            d = rng.uniform(6, 16)
            place("tree", d, d, "disc")
        for _ in range(max(1, round(rng.randint(1, 6) * scale))):
            place("vehicle", rng.uniform(4, 7), rng.uniform(2.2, 3), "rect")
        return Scene("procedural", seed, tuple(objects), size=size, px_per_m=TILE_PX / size)
