"""Perception tools: `segment(class)` over a scene, from ground truth (Oracle), pixels (ColorSeg) or boxes (Box).

A learned segmenter plugs in by subclassing `Segmenter`; agents only ever see the detections it returns.
`perceived_scene` rebuilds a scene from a segmenter's detections: the "robust to perception" validity check runs a
program on it and on ground truth and keeps the task only when both answers agree.
"""

from __future__ import annotations

import io
from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import lru_cache

from .scene import CLASSES, COLOURS, GeoObject, Scene


@dataclass(frozen=True)
class Detection:
    """One detected object in scene metres (x east, y south)."""

    bbox: tuple[float, float, float, float]
    area: float
    centroid: tuple[float, float]
    score: float = 1.0


class Segmenter(ABC):
    name = "abstract"

    @abstractmethod
    def segment(self, scene: Scene, cls: str) -> list[Detection]: ...


class OracleSegmenter(Segmenter):
    """Ground-truth objects: an upper bound and the reference for robustness checks."""

    name = "oracle"

    def segment(self, scene: Scene, cls: str) -> list[Detection]:
        return [Detection((o.x0, o.y0, o.x1, o.y1), o.area, o.centroid) for o in scene.of_class(cls)]


class BoxSegmenter(Segmenter):
    """Axis-aligned boxes only (what NEON's tree annotations give): area and centre of the box, not the shape."""

    name = "box"

    def segment(self, scene: Scene, cls: str) -> list[Detection]:
        return [
            Detection((o.x0, o.y0, o.x1, o.y1), (o.x1 - o.x0) * (o.y1 - o.y0), ((o.x0 + o.x1) / 2, (o.y0 + o.y1) / 2))
            for o in scene.of_class(cls)
        ]


class ColorSegmenter(Segmenter):
    """Palette threshold + 4-connected components on the rendered image (procedural and OSM renders)."""

    name = "colorseg"

    def __init__(self, tolerance: int = 12) -> None:
        self.tolerance = tolerance

    def segment(self, scene: Scene, cls: str) -> list[Detection]:
        if cls not in CLASSES or scene.photo is not None:
            return []
        k = scene.px_per_m
        return [
            Detection((x0 / k, y0 / k, x1 / k, y1 / k), n / k**2, (cx / k, cy / k))
            for (x0, y0, x1, y1), n, (cx, cy) in _components(_class_map(scene, self.tolerance) == CLASSES.index(cls))
        ]


@lru_cache(maxsize=64)
def _class_map(scene: Scene, tolerance: int):
    """Per pixel: the index of the class whose palette colour it matches (within tolerance), else 255."""
    import numpy as np
    from PIL import Image

    pixels = np.asarray(Image.open(io.BytesIO(scene.render_png())).convert("RGB"), dtype=np.uint32)
    packed = (pixels[..., 0] << 16) | (pixels[..., 1] << 8) | pixels[..., 2]
    colours, inverse = np.unique(packed, return_inverse=True)  # a render has few distinct colours: classify those
    lookup = np.full(len(colours), 255, dtype=np.uint8)
    for slot, value in enumerate(colours.tolist()):
        rgb = (value >> 16, (value >> 8) & 255, value & 255)
        for index, cls in enumerate(CLASSES):
            if any(
                max(abs(a - b) for a, b in zip(rgb, ref, strict=True)) <= tolerance for ref in COLOURS[cls].values()
            ):
                lookup[slot] = index
    return lookup[inverse].reshape(packed.shape)


def _components(mask) -> list[tuple[tuple[int, int, int, int], int, tuple[float, float]]]:
    """4-connected components of a boolean mask from its row runs (union-find over runs: linear in the runs)."""
    import numpy as np

    height, width = mask.shape
    padded = np.zeros((height, width + 2), dtype=np.int8)
    padded[:, 1:-1] = mask
    edges = np.flatnonzero(np.diff(padded.ravel()))  # pairs of (run start, run end) in padded flat coordinates
    runs = [
        (a // (width + 2), a % (width + 2), b % (width + 2))
        for a, b in zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True)
    ]
    parent = list(range(len(runs)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    row_start = 0  # first run of the previous row
    for index, (y, start, end) in enumerate(runs):
        while runs[row_start][0] < y - 1:
            row_start += 1
        m = row_start
        while m < index and runs[m][0] == y - 1:
            if runs[m][1] < end and start < runs[m][2]:
                a, b = find(index), find(m)
                if a != b:
                    parent[max(a, b)] = min(a, b)
            m += 1
    groups: dict[int, list[tuple[int, int, int]]] = {}
    for index, run in enumerate(runs):
        groups.setdefault(find(index), []).append(run)
    found = []
    for members in groups.values():
        n = sum(e - s for _, s, e in members)
        sx = sum((s + e) * (e - s) / 2 for _, s, e in members)  # sum of pixel-centre x minus 0.5 per pixel
        sy = sum((y + 0.5) * (e - s) for y, s, e in members)
        bbox = (
            min(s for _, s, _ in members),
            min(y for y, _, _ in members),
            max(e for _, _, e in members),
            max(y for y, _, _ in members) + 1,
        )
        found.append((bbox, n, (sx / n, sy / n)))
    return sorted(found)


SEGMENTERS: dict[str, type[Segmenter]] = {"oracle": OracleSegmenter, "colorseg": ColorSegmenter, "box": BoxSegmenter}


@lru_cache(maxsize=256)
def perceived_scene(scene: Scene, segmenter: str) -> Scene:
    """The scene as the named segmenter sees it: one object per detection, with its measured area and centre."""
    tool = SEGMENTERS[segmenter]()
    objects = []
    for cls in CLASSES:
        for d in tool.segment(scene, cls):
            objects.append(GeoObject(len(objects), cls, "rect", *d.bbox, measured=(d.area, *d.centroid)))
    return Scene(scene.source, scene.seed, tuple(objects), scene.attribution, scene.size, scene.px_per_m, scene.photo)
