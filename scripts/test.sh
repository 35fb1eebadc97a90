#!/usr/bin/env bash
# Install everything the test suite needs (Python extras, sandbox system packages and image, the real
# OpenAI-compatible server, a browser, the trainer adapters' own venvs) and run the default test suite; this is
# what .ci/run calls, after the README's first command.
#
# The main venv is installed first (the other steps read it); the rest are independent of each other and mostly
# wait on the network and disk, so they run side by side in lanes, each with its output in .setup-logs/ (printed
# when a lane ends, whole when it fails). Each phase prints its wall time and the machine's load, and a table of
# them is printed before pytest starts (or when a phase fails), so a CI log shows where the time went; pytest's own
# closing line stays the last line and carries the tests' time, and --durations lists the slowest tests. Extra
# arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

LOGS=.setup-logs
mkdir -p "$LOGS"
PHASES=()
T0=$SECONDS
load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'; }
timings() {
  printf '[test.sh] setup timings (%s cores, load now %s):\n' "$(nproc)" "$(load)"
  local line
  for line in "${PHASES[@]}"; do printf '[test.sh]   %s\n' "$line"; done
  printf '[test.sh]   %-16s %5ds\n' total $((SECONDS - T0))
}
trap 'status=$?; timings; exit $status' EXIT

# phase NAME COMMAND...: run one setup step and print its wall time (a failure stops its lane).
phase() {
  local name=$1 start=$SECONDS status=0
  shift
  printf '[test.sh] == %s (load %s)\n' "$name" "$(load)"
  "$@" || status=$?
  printf '[test.sh] %-16s %5ds%s\n' "$name" $((SECONDS - start)) "$([ $status = 0 ] || echo "  FAILED (exit $status)")"
  return "$status"
}

# lane NAME PHASE_ARGS...: phases joined by `--`, run in order in the background, output in $LOGS/NAME.log.
LANES=()
lane() {
  local name=$1
  shift
  (
    set -e
    while [ $# -gt 0 ]; do
      local args=()
      while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
      [ $# -gt 0 ] && shift
      phase "${args[@]}"
    done
  ) >"$LOGS/$name.log" 2>&1 &
  LANES+=("$name:$!")
}

phase install bash scripts/install.sh --all | tee "$LOGS/install.log"
PHASES+=("$(grep -E '^\[test.sh\] install ' "$LOGS/install.log" | cut -c11-)")

lane system sandbox-setup bash scripts/setup_sandbox.sh -- browser-setup bash scripts/setup_browser.sh
lane data server-setup bash scripts/setup_server.sh -- geo-setup bash scripts/setup_geo.sh
lane verl verl-setup bash scripts/setup_verl.sh
lane verifiers verifiers-setup bash scripts/setup_verifiers.sh
lane nemo nemo-gym-setup bash scripts/setup_nemo_gym.sh
# each extra that needs no torch installed alone in a fresh venv with an import smoke (#41: extras must resolve to
# versions the code supports)
lane extras extras-check bash scripts/check_extras.sh light
failed=0
for entry in "${LANES[@]}"; do
  name=${entry%%:*}
  if ! wait "${entry#*:}"; then failed=1; fi
  cat "$LOGS/$name.log"
  while IFS= read -r line; do PHASES+=("${line#\[test.sh\] }"); done < <(grep -E '^\[test.sh\] [a-z-]+ +[0-9]+s' "$LOGS/$name.log")
done
[ "$failed" = 0 ] || { echo "[test.sh] a setup lane failed (its log is above)" >&2; exit 1; }
trap - EXIT
timings

# Container tests must run (not skip) wherever this script runs: setup_sandbox.sh installed podman above.
export RLVR_REQUIRE_CONTAINER=1
# Likewise the real-browser tests (WebShop site, run viewer): setup_browser.sh installed Debian's chromium.
export RLVR_REQUIRE_BROWSER=1
# Likewise the trainer adapters in their own venvs (verl, verifiers and NeMo Gym pin versions
# the main venv cannot hold; NeMo Gym also declares Python >= 3.12).
export RLVR_REQUIRE_ISOLATED=1
printf '[test.sh] == pytest (load %s)\n' "$(load)"
# pytest's exit status is the script's: 1 for failures, and 5 (nothing collected) is non-zero too.
exec .venv/bin/python -m pytest -q --durations=20 "$@"
