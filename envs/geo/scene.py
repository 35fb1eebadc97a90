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
from functools import lru_cache

from rlvr_gym.family import stable_seed

SIZE = 256
CLASSES = ("road", "water", "building", "tree", "vehicle")
PALETTE = {
    "background": (120, 150, 90),
    "road": (90, 90, 90),
    "water": (40, 90, 200),
    "building": (200, 120, 80),
    "tree": (20, 100, 30),
    "vehicle": (240, 230, 40),
}


@dataclass(frozen=True)
class GeoObject:
    """One object: class, shape ("rect" or "disc") and its box; metres are pixels (1 px = 1 m)."""

    id: int
    cls: str
    shape: str
    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def centroid(self) -> tuple[float, float]:
        return ((self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2)

    @property
    def area(self) -> float:
        w, h = self.x1 - self.x0, self.y1 - self.y0
        return math.pi * (w / 2) ** 2 if self.shape == "disc" else w * h


@dataclass(frozen=True)
class Scene:
    source: str
    seed: int
    objects: tuple[GeoObject, ...]
    attribution: str = ""

    def of_class(self, cls: str) -> list[GeoObject]:
        return [o for o in self.objects if o.cls == cls]

    def to_text(self) -> str:
        """Structured textual rendering for text-only models (x grows east, y grows south, 1 px = 1 m)."""
        lines = [f"Scene {SIZE}x{SIZE} m (x east, y south). Objects:"]
        for o in self.objects:
            cx, cy = o.centroid
            lines.append(
                f"#{o.id} {o.cls} {o.shape} box=({o.x0:.0f},{o.y0:.0f},{o.x1:.0f},{o.y1:.0f}) "
                f"centre=({cx:.1f},{cy:.1f}) area={o.area:.1f}"
            )
        return "\n".join(lines)

    def render_png(self) -> bytes:
        from PIL import Image, ImageDraw

        image = Image.new("RGB", (SIZE, SIZE), PALETTE["background"])
        draw = ImageDraw.Draw(image)
        for o in self.objects:
            box = (o.x0, o.y0, o.x1 - 1, o.y1 - 1)
            (draw.ellipse if o.shape == "disc" else draw.rectangle)(box, fill=PALETTE[o.cls])
        buffer = io.BytesIO()
        image.save(buffer, format="PNG", pnginfo=_png_info(self.attribution))
        return buffer.getvalue()

    def data_url(self) -> str:
        return "data:image/png;base64," + base64.b64encode(self.render_png()).decode()


def _png_info(attribution: str):
    from PIL.PngImagePlugin import PngInfo

    info = PngInfo()
    if attribution:
        info.add_text("Attribution", attribution)
    return info


class SceneSource(ABC):
    """Anything that yields scenes by seed (procedural generator, OSM layouts, aerial photos)."""

    name: str = "abstract"

    @abstractmethod
    def scene(self, seed: int) -> Scene: ...


def _overlaps(a: tuple[float, ...], boxes: list[tuple[float, ...]]) -> bool:
    return any(a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3] for b in boxes)


class ProceduralScenes(SceneSource):
    """Seeded layouts: 1-2 roads, 0-2 water bodies, then non-overlapping buildings, trees and vehicles."""

    name = "procedural"

    def scene(self, seed: int) -> Scene:
        return _procedural(seed)


@lru_cache(maxsize=512)
def _procedural(seed: int) -> Scene:
    rng = random.Random(stable_seed("geo-scene", seed))
    boxes: list[tuple[float, ...]] = []
    objects: list[GeoObject] = []

    def place(cls: str, shape: str, w: int, h: int, tries: int = 40, margin: int = 2) -> None:
        for _ in range(tries):
            x, y = rng.randint(0, SIZE - w), rng.randint(0, SIZE - h)
            box = (x, y, x + w, y + h)
            grown = (x - margin, y - margin, x + w + margin, y + h + margin)
            if not _overlaps(grown, boxes):
                boxes.append(box)
                objects.append(GeoObject(len(objects), cls, shape, *map(float, box)))
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


SOURCES: dict[str, SceneSource] = {"procedural": ProceduralScenes()}
