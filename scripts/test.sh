#!/usr/bin/env bash
# Install everything the test suite needs (Python extras, sandbox system packages and image, the real
# OpenAI-compatible server) and run the default test suite; this is what .ci/run calls.
#
# Each setup phase prints its wall time and the machine's load, and a table of them is printed before pytest
# starts (or when a phase fails), so a CI log shows where the time went; pytest's own closing line stays the last
# line and carries the tests' time, and --durations lists the slowest tests. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

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

# phase NAME COMMAND...: run one setup step and record its wall time (a failure stops the run).
phase() {
  local name=$1 start=$SECONDS status=0
  shift
  printf '[test.sh] == %s (load %s)\n' "$name" "$(load)"
  "$@" || status=$?
  PHASES+=("$(printf '%-16s %5ds%s' "$name" $((SECONDS - start)) "$([ $status = 0 ] || echo "  FAILED (exit $status)")")")
  return "$status"
}

phase install bash scripts/install.sh --all
phase sandbox-setup bash scripts/setup_sandbox.sh
phase server-setup bash scripts/setup_server.sh
phase browser-setup bash scripts/setup_browser.sh
phase geo-setup bash scripts/setup_geo.sh
phase verl-setup bash scripts/setup_verl.sh
phase verifiers-setup bash scripts/setup_verifiers.sh
phase nemo-gym-setup bash scripts/setup_nemo_gym.sh
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
exec .venv/bin/python -m pytest -q --durations=15 "$@"
