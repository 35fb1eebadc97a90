#!/usr/bin/env bash
# Build (once) and cache a real OpenAI-compatible server for the integration tests and benchmarks.
#
# The server is llama-cpp-python[server] in its own virtualenv, so its pins never touch the project venv.
# Building the llama.cpp wheel from the sdist takes minutes, so the wheel (and every dependency wheel) is cached
# under $RLVR_GYM_CACHE/wheels; later runs create the venv from the cache offline in seconds.
#
# Usage: scripts/setup_server.sh            # prints the server venv's python on the last line
# Env:   RLVR_GYM_CACHE (default ~/.cache/rlvr-gym), RLVR_GYM_SERVER_VENV (default $RLVR_GYM_CACHE/server-venv),
#        LLAMA_CPP_VERSION (default 0.3.36), PYTHON (default python3), CMAKE_ARGS (extra llama.cpp build flags).
set -euo pipefail

CACHE="${RLVR_GYM_CACHE:-$HOME/.cache/rlvr-gym}"
WHEELS="$CACHE/wheels"
VENV="${RLVR_GYM_SERVER_VENV:-$CACHE/server-venv}"
VERSION="${LLAMA_CPP_VERSION:-0.3.36}"
PYTHON="${PYTHON:-python3}"
REQ="llama-cpp-python[server]==$VERSION"

mkdir -p "$WHEELS"

if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import llama_cpp, llama_cpp.server" 2>/dev/null; then
  echo "server venv ready: $VENV" >&2
  echo "$VENV/bin/python"
  exit 0
fi

if ! ls "$WHEELS"/llama_cpp_python-"$VERSION"-*.whl >/dev/null 2>&1; then
  echo "building llama-cpp-python $VERSION wheel (one-off, several minutes)..." >&2
  # Portable CPU build, no examples/tests/tools: only the shared libraries the Python binding loads.
  export CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_CURL=OFF ${CMAKE_ARGS:-}"
  export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"
  "$PYTHON" -m pip wheel --no-deps --no-cache-dir -w "$WHEELS" "llama-cpp-python==$VERSION"
fi

# Cache the dependency wheels too, so the venv can be recreated offline.
if ! "$PYTHON" -m pip wheel -q --no-index --find-links "$WHEELS" -w "$WHEELS" "$REQ" >/dev/null 2>&1; then
  "$PYTHON" -m pip wheel -q --find-links "$WHEELS" -w "$WHEELS" "$REQ"
fi

rm -rf "$VENV.tmp"
"$PYTHON" -m venv "$VENV.tmp"
"$VENV.tmp/bin/python" -m pip install -q --no-index --find-links "$WHEELS" "$REQ"
"$VENV.tmp/bin/python" -c "import llama_cpp, llama_cpp.server"
rm -rf "$VENV"
mv "$VENV.tmp" "$VENV"
# venv scripts embed their own path; the python binary itself works after the rename.
echo "server venv ready: $VENV" >&2
echo "$VENV/bin/python"
