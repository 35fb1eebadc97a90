"""Procedural aerial-like scenes with exact per-object ground truth, behind a `SceneSource` interface.

Objects are axis-aligned rectangles (roads, water, buildings, vehicles) and discs (trees) so areas, centroids and
distances are exact closed forms; the rendered image is only a view of that ground truth.
"""

from __future__ import annotations

import base64
import io
import math
import random
from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import cached_property, lru_cache

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

    @cached_property
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

    @cached_property
    def centroid(self) -> tuple[float, float]:
        if self.measured is not None:
            return self.measured[1], self.measured[2]
        if self.shape in ("poly", "line"):
            point = self.geometry.centroid
            return (point.x, point.y)
        return ((self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2)

    @cached_property
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
    """Objects plus how to show them: drawn from the objects, or a real photo crop (`photo`, PNG bytes)."""

    source: str
    seed: int
    objects: tuple[GeoObject, ...]
    attribution: str = ""
    size: float = SIZE  # tile extent in metres (square)
    px_per_m: float = 1.0
    photo: bytes | None = None

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
    """PNG of the scene (the photo crop, or the objects drawn in class colours) with attribution in its metadata."""
    from PIL import Image, ImageDraw

    if scene.photo is not None:
        return scene.photo  # photo sources save their crop with the attribution already
    side = round(scene.size * scene.px_per_m)
    image = Image.new("RGB", (side, side), BACKGROUND)
    draw = ImageDraw.Draw(image)
    k = scene.px_per_m
    for o in sorted(scene.objects, key=lambda o: DRAW_ORDER.index(o.cls)):
        fill = colour_of(o)
        if o.shape in ("poly", "line"):
            _draw_geometry(draw, o.geometry, k, fill)
        else:
            box = (o.x0 * k, o.y0 * k, o.x1 * k - 1, o.y1 * k - 1)
            (draw.ellipse if o.shape == "disc" else draw.rectangle)(box, fill=fill)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", pnginfo=png_info(scene.attribution))
    return buffer.getvalue()


DRAW_ORDER = ("water", "road", "vehicle", "building", "tree")


def _draw_geometry(draw, geometry, k: float, fill: tuple[int, int, int]) -> None:
    for polygon in getattr(geometry, "geoms", [geometry]):
        if polygon.is_empty:
            continue
        draw.polygon([(x * k, y * k) for x, y in polygon.exterior.coords], fill=fill)
        for hole in polygon.interiors:
            draw.polygon([(x * k, y * k) for x, y in hole.coords], fill=BACKGROUND)


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

    def scene(self, seed: int) -> Scene:
        return _cached_scene(self, seed)

    @abstractmethod
    def build(self, seed: int) -> Scene: ...

    def available(self) -> str | None:
        """None when scenes can be built here, else why not (missing data, with the setup command)."""
        return None


@lru_cache(maxsize=512)
def _cached_scene(source: SceneSource, seed: int) -> Scene:
    return source.build(seed)


def _overlaps(a: tuple[float, ...], boxes: list[tuple[float, ...]]) -> bool:
    return any(a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3] for b in boxes)


class ProceduralScenes(SceneSource):
    """Seeded layouts: 1-2 roads, 0-2 water bodies, then non-overlapping buildings, trees and vehicles."""

    name = "procedural"

    def build(self, seed: int) -> Scene:
        rng = random.Random(stable_seed("geo-scene", seed))
        paint = random.Random(stable_seed("geo-colour", seed))  # own stream: colours never move the layout
        boxes: list[tuple[float, ...]] = []
        objects: list[GeoObject] = []

        def place(cls: str, shape: str, w: int, h: int, tries: int = 40, margin: int = 2) -> None:
            for _ in range(tries):
                x, y = rng.randint(0, SIZE - w), rng.randint(0, SIZE - h)
                box = (x, y, x + w, y + h)
                grown = (x - margin, y - margin, x + w + margin, y + h + margin)
                if not _overlaps(grown, boxes):
                    boxes.append(box)
                    colour = paint.choice(sorted(COLOURS[cls]))
                    objects.append(GeoObject(len(objects), cls, shape, *map(float, box), attrs=(("color", colour),)))
                    return

        for _ in range(rng.randint(1, 2)):
            if rng.random() < 0.5:
                place("road", "rect", SIZE, rng.randint(8, 14))
            else:
                place("road", "rect", rng.randint(8, 14), SIZE)
        for _ in range(rng.randint(0, 2)):
            place("water", "rect", rng.randint(20, 60), rng.randint(20, 60))
        for _ in range(rng.randint(2, 7)):
            place("building", "rect", rng.randint(10, 30), rng.randint(10, 30))
        for _ in range(rng.randint(2, 8)):
            d = rng.randint(6, 16)
            place("tree", "disc", d, d)
        for _ in range(rng.randint(1, 6)):
            w, h = (rng.randint(4, 7), 3) if rng.random() < 0.5 else (3, rng.randint(4, 7))
            place("vehicle", "rect", w, h)
        return Scene("procedural", seed, tuple(objects))
