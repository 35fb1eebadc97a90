"""Real scene sources: OpenStreetMap Helsinki layouts drawn top-down, and NEON aerial photo crops with tree boxes.

Both read only the files `data.py` prepared; a missing file makes `available()` say which setup command to run.
Ground truth is exact by construction: OSM tiles are the clipped geometry that is drawn, NEON crops carry the
annotated boxes whose centres fall inside the crop (clipped to it).
"""

from __future__ import annotations

import io
import json
import random
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from functools import cached_property, lru_cache

from rlvr_gym.family import stable_seed

from . import data
from .scene import TILE_METRES, TILE_PX, GeoObject, Scene, SceneSource, png_info

SETUP_HINT = "run `bash scripts/setup_geo.sh` (or `python -m rlvr_gym.envs.geo.data`) once"
TREE_RADIUS_M = 3.0
NEON_PX_PER_M = 10.0  # NEON AOP RGB orthophotos have 0.1 m pixels
NEON_CROP_PX = 320


class OsmScenes(SceneSource):
    """Tiles of central Helsinki at random offsets: buildings, drivable roads (buffered), water, trees.

    Like procedural tiles, each covers 192, 256 or 320 m (seeded) and is drawn at 512 px, so scale varies."""

    name = "osm"
    classes = ("road", "water", "building", "tree")
    recurring = True  # a 1.0 x 1.7 km extract: the same buildings are the largest in many tiles

    def available(self) -> str | None:
        return None if data.osm_path().exists() else f"OSM data missing at {data.osm_path()}: {SETUP_HINT}"

    @cached_property
    def layers(self) -> dict:
        from shapely.geometry import LineString, Point, Polygon

        raw = json.loads(data.osm_path().read_text())
        shapes = []
        for feature in raw["features"]:
            points = feature["points"]
            if feature["kind"] == "poly":
                geometry = Polygon(points).buffer(0)  # make_valid for self-touching rings
            elif feature["kind"] == "line":
                geometry = LineString(points)
            else:
                geometry = Point(points[0])
            shapes.append((feature, geometry))
        from shapely.strtree import STRtree

        index = STRtree([geometry for _, geometry in shapes])  # a tile reads only the shapes its box meets
        return {"extent": raw["extent_m"], "attribution": raw["attribution"], "shapes": shapes, "index": index}

    def build(self, seed: int) -> Scene:
        rng = random.Random(stable_seed("geo-osm", seed))
        width, height = self.layers["extent"]
        size = float(rng.choice(TILE_METRES))
        best: tuple[int, list[GeoObject]] = (-1, [])
        for _ in range(12):  # prefer tiles with some buildings and a road; keep the richest try
            ox, oy = rng.uniform(0, width - size), rng.uniform(0, height - size)
            objects = self._tile(ox, oy, size)
            richness = min(sum(o.cls == "building" for o in objects), 6) + 6 * any(o.cls == "road" for o in objects)
            if richness > best[0]:
                best = (richness, objects)
            if richness >= 12:
                break
        attribution = self.layers["attribution"]
        return Scene("osm", seed, tuple(best[1]), attribution=attribution, size=size, px_per_m=TILE_PX / size)

    def _tile(self, ox: float, oy: float, size: float) -> list[GeoObject]:
        from shapely import affinity
        from shapely.geometry import box

        tile = box(ox, oy, ox + size, oy + size)
        objects: list[GeoObject] = []
        shapes = self.layers["shapes"]
        for feature, geometry in (shapes[i] for i in sorted(self.layers["index"].query(tile))):
            if not geometry.intersects(tile):
                continue
            label = (("label", feature["label"]),)
            if feature["kind"] == "point":
                x, y = geometry.x - ox, geometry.y - oy
                r = TREE_RADIUS_M
                if min(x, y) >= r and max(x, y) <= size - r:  # whole crown inside the tile
                    objects.append(GeoObject(len(objects), "tree", "disc", x - r, y - r, x + r, y + r, attrs=label))
                continue
            clipped = affinity.translate(geometry.intersection(tile), -ox, -oy)
            for piece in getattr(clipped, "geoms", [clipped]):
                if feature["kind"] == "line" and piece.geom_type == "LineString" and piece.length >= 5:
                    points = tuple((round(x, 2), round(y, 2)) for x, y in piece.coords)
                    shape, width = "line", feature["width"]
                elif feature["kind"] == "poly" and piece.geom_type == "Polygon" and piece.area >= 5:
                    points = tuple((round(x, 2), round(y, 2)) for x, y in piece.exterior.coords)
                    shape, width = "poly", 0.0
                else:
                    continue
                x0, y0, x1, y1 = piece.bounds
                objects.append(
                    GeoObject(len(objects), feature["cls"], shape, x0, y0, x1, y1, points, width, attrs=label)
                )
        return objects


class NeonScenes(SceneSource):
    """32 m crops (320 px at 0.1 m) of real NEON airborne photos; objects are the annotated tree crowns."""

    name = "neon"
    classes = ("tree",)

    def available(self) -> str | None:
        missing = [s for s in data.NEON_IMAGES if not (data.neon_dir() / f"{s}.xml").exists()]
        return f"NEON data missing in {data.neon_dir()}: {SETUP_HINT}" if missing else None

    @cached_property
    def images(self) -> list[tuple[str, tuple[int, int], list[tuple[str, int, int, int, int]]]]:
        """(stem, (width, height), [(label, xmin, ymin, xmax, ymax)]) per annotated photo (Pascal-VOC XML)."""
        out = []
        for stem in data.NEON_IMAGES:
            root = ET.fromstring((data.neon_dir() / f"{stem}.xml").read_bytes())
            size = (int(root.findtext("size/width") or 0), int(root.findtext("size/height") or 0))
            boxes = [
                (
                    obj.findtext("name") or "Tree",
                    *(int(float(obj.findtext(f"bndbox/{k}") or 0)) for k in ("xmin", "ymin", "xmax", "ymax")),
                )
                for obj in root.iter("object")
            ]
            out.append((stem, size, boxes))
        return out

    @lru_cache(maxsize=4)  # noqa: B019 (one source object per process; the photos are what is worth keeping)
    def _photo(self, stem: str):
        from PIL import Image

        with Image.open(data.neon_dir() / f"{stem}.png") as photo:
            return photo.convert("RGB")

    def build(self, seed: int) -> Scene:
        rng = random.Random(stable_seed("geo-neon", seed))
        stem, (width, height), boxes = rng.choice(self.images)
        left, top = rng.randrange(0, width - NEON_CROP_PX + 1), rng.randrange(0, height - NEON_CROP_PX + 1)
        right, bottom = left + NEON_CROP_PX, top + NEON_CROP_PX
        objects = []
        for label, x0, y0, x1, y1 in boxes:
            if not (left <= (x0 + x1) / 2 < right and top <= (y0 + y1) / 2 < bottom):
                continue
            clip = [max(x0, left) - left, max(y0, top) - top, min(x1, right) - left, min(y1, bottom) - top]
            x0m, y0m, x1m, y1m = (v / NEON_PX_PER_M for v in clip)
            objects.append(
                GeoObject(len(objects), "tree", "rect", x0m, y0m, x1m, y1m, attrs=(("label", label.lower()),))
            )
        attribution = f"{data.NEON_ATTRIBUTION}; image {stem}"
        return Scene(
            "neon",
            seed,
            tuple(objects),
            attribution=attribution,
            size=NEON_CROP_PX / NEON_PX_PER_M,
            px_per_m=NEON_PX_PER_M,
            photo=_Crop(self, stem, (left, top, right, bottom), attribution),
        )


@dataclass(frozen=True)
class _Crop:
    """A NEON crop's PNG, encoded when first asked for (then cached with the scene's render)."""

    source: NeonScenes
    stem: str
    box: tuple[int, int, int, int]
    attribution: str

    def __call__(self) -> bytes:
        crop = io.BytesIO()
        self.source._photo(self.stem).crop(self.box).save(
            crop, format="PNG", compress_level=1, pnginfo=png_info(self.attribution)
        )
        return crop.getvalue()
