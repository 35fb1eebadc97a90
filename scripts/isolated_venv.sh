# Sourced by the setup_<trainer>.sh scripts: an isolated venv for a trainer whose pins clash with the main venv.
# The caller sets VENV (e.g. .venv-verl), TAG (its log prefix) and READY (Python that imports what the venv must
# hold); if READY already succeeds, the calling script exits here. Otherwise the venv is created, `pip_` installs
# into it with pip's output in $VENV/install.log (shown only on failure), and `installed` prints time and size.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON=${PYTHON:-python3}
T0=$SECONDS
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "$READY" 2>/dev/null; then
  echo "[$TAG] $VENV ready"; exit 0
fi
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
LOG=$VENV/install.log
: >"$LOG"
# Editable installs of this repo write its egg-info into the checkout: scripts/test.sh runs the setup scripts side by
# side, so those installs take a lock (the others run in parallel).
pip_() {
  local lock=()
  case " $* " in *" -e "*) lock=(flock "${TMPDIR:-/tmp}/rlvr-gym-editable-install.lock") ;; esac
  if ! PATH="$(pwd)/$VENV/bin:$PATH" "${lock[@]}" "$VENV/bin/python" -m pip --disable-pip-version-check --no-input "$@" >>"$LOG" 2>&1; then
    grep -v "^WARNING: Location '" "$LOG" | tail -n 40 >&2
    echo "[$TAG] ERROR: pip $* failed (log: $LOG)" >&2
    exit 1
  fi
}
installed() { echo "[$TAG] $VENV installed in $((SECONDS - T0))s ($(du -sh "$VENV" | cut -f1))"; }
pip_ install -q --upgrade pip
