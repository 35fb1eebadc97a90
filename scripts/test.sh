#!/usr/bin/env bash
# Install everything the test suite needs (Python extras, sandbox system packages and image, the real
# OpenAI-compatible server) and run the default test suite; this is what .ci/run calls.
#
# Each phase prints its wall time and the machine's load, and a summary table closes the run (also on failure),
# so a CI log shows where the time went. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

PHASES=()
T0=$SECONDS
load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'; }
summary() {
  local status=$?
  printf '\n[test.sh] phase timings (%s cores, load now %s):\n' "$(nproc)" "$(load)"
  local line
  for line in "${PHASES[@]}"; do printf '[test.sh]   %s\n' "$line"; done
  printf '[test.sh]   %-16s %5ds\n' total $((SECONDS - T0))
  exit "$status"
}
trap summary EXIT

# phase NAME COMMAND...: run one step, record its wall time (and its failure, which stops the run).
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

# Container tests must run (not skip) wherever this script runs: setup_sandbox.sh installed podman above.
export RLVR_REQUIRE_CONTAINER=1
# pytest's exit 5 (nothing collected) is non-zero too, so an empty run fails like a failing one.
phase pytest .venv/bin/python -m pytest -q --durations=15 "$@"
