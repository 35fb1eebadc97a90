#!/usr/bin/env bash
# An isolated venv for the NeMo Gym template (./.venv-nemo). nemo-gym 0.4.0 declares Python >= 3.12; this machine
# has 3.11, so it is installed with --ignore-requires-python (its code imports and serves under 3.11: the tests
# check it), and its mcp<2 pin stays out of the other venvs. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENV=.venv-nemo
T0=$SECONDS
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import resources_servers.gymnasium, rlvr_gym, pytest" 2>/dev/null; then
  echo "[setup_nemo_gym] $VENV ready"; exit 0
fi
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
LOG=$VENV/install.log
: >"$LOG"
pip_() {
  if ! "$VENV/bin/python" -m pip --disable-pip-version-check --no-input "$@" >>"$LOG" 2>&1; then
    grep -v "^WARNING: Location '" "$LOG" | tail -n 40 >&2
    echo "[setup_nemo_gym] ERROR: pip $* failed (log: $LOG)" >&2
    exit 1
  fi
}
pip_ install -q --upgrade pip
# --ignore-requires-python lets pip pick releases of any package that need 3.12 (numpy 2.5 and scipy 1.18 sdists
# fail to build): prefer wheels (cp311 wheels are older releases) and hold numpy back. (--only-binary is worse:
# antlr4-python3-runtime ships no wheel, so pip falls back to omegaconf 1.x, which nemo-gym cannot import.)
CONSTRAINTS=$VENV/constraints.txt
printf 'numpy<2.5\n' >"$CONSTRAINTS"
pip_ install -q --ignore-requires-python --prefer-binary -c "$CONSTRAINTS" "nemo-gym==0.4.0" "pytest>=8" "pytest-asyncio>=0.23" "pytest-timeout>=2" httpx
pip_ install -q -e .
echo "[setup_nemo_gym] $VENV installed in $((SECONDS - T0))s ($(du -sh "$VENV" | cut -f1))"
