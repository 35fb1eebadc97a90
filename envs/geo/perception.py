"""Perception tools: `segment(class)` over a scene, from ground truth (Oracle) or from pixels (ColorSeg).

A learned segmenter plugs in by subclassing `Segmenter`; agents only ever see the detections it returns.
"""

from __future__ import annotations

import io
from abc import ABC, abstractmethod
from dataclasses import dataclass

from .scene import CLASSES, PALETTE, Scene


@dataclass(frozen=True)
class Detection:
    bbox: tuple[int, int, int, int]
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
        return [
            Detection((int(o.x0), int(o.y0), int(o.x1), int(o.y1)), o.area, o.centroid) for o in scene.of_class(cls)
        ]


class ColorSegmenter(Segmenter):
    """Palette threshold + 4-connected components on the rendered image (procedural and OSM renders)."""

    name = "colorseg"

    def __init__(self, tolerance: int = 12) -> None:
        self.tolerance = tolerance

    def segment(self, scene: Scene, cls: str) -> list[Detection]:
        from PIL import Image

        if cls not in CLASSES:
            return []
        image = Image.open(io.BytesIO(scene.render_png())).convert("RGB")
        width, height = image.size
        target = PALETTE[cls]
        pixels = image.load()
        mask = bytearray(width * height)
        for y in range(height):
            for x in range(width):
                if all(abs(c - t) <= self.tolerance for c, t in zip(pixels[x, y], target, strict=True)):
                    mask[y * width + x] = 1
        return _components(mask, width, height)


def _components(mask: bytearray, width: int, height: int) -> list[Detection]:
    found = []
    for start in range(width * height):
        if mask[start] != 1:
            continue
        mask[start] = 2
        stack, xs, ys = [start], [], []
        while stack:
            p = stack.pop()
            x, y = p % width, p // width
            xs.append(x)
            ys.append(y)
            for q, ok in ((p - 1, x > 0), (p + 1, x < width - 1), (p - width, y > 0), (p + width, y < height - 1)):
                if ok and mask[q] == 1:
                    mask[q] = 2
                    stack.append(q)
        bbox = (min(xs), min(ys), max(xs) + 1, max(ys) + 1)
        found.append(Detection(bbox, float(len(xs)), (sum(xs) / len(xs) + 0.5, sum(ys) / len(ys) + 0.5)))
    return found


SEGMENTERS: dict[str, type[Segmenter]] = {"oracle": OracleSegmenter, "colorseg": ColorSegmenter}
