#!/usr/bin/env bash
# Install everything the test suite needs (Python extras, sandbox system packages and image, the real
# OpenAI-compatible server) and run the default test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh --all
[ -f scripts/setup_sandbox.sh ] && bash scripts/setup_sandbox.sh
[ -f scripts/setup_server.sh ] && bash scripts/setup_server.sh
. .venv/bin/activate
# Container tests must run (not skip) wherever this script runs: it installed podman above.
export RLVR_REQUIRE_CONTAINER=1
set +e
python -m pytest -q "$@"
status=$?
set -e
# pytest exits 5 when it collected nothing: that is a failure of the suite, not a pass.
exit "$status"
