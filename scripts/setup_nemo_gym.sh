#!/usr/bin/env bash
# An isolated venv for the NeMo Gym template (./.venv-nemo). nemo-gym 0.4.0 declares Python >= 3.12; this machine
# has 3.11, so it is installed with --ignore-requires-python (its code imports and serves under 3.11: the tests
# check it), and its mcp<2 pin stays out of the other venvs. Idempotent.
VENV=.venv-nemo
TAG=setup_nemo_gym
READY="import resources_servers.gymnasium, responses_api_agents.gymnasium_agent.app, rlvr_gym, pytest"
source "$(dirname "$0")/isolated_venv.sh"
# --ignore-requires-python lets pip pick releases of any package that need 3.12 (numpy 2.5 and scipy 1.18 sdists
# fail to build): prefer wheels (cp311 wheels are older releases) and hold numpy back. (--only-binary is worse:
# antlr4-python3-runtime ships no wheel, so pip falls back to omegaconf 1.x, which nemo-gym cannot import.)
CONSTRAINTS=$VENV/constraints.txt
printf 'numpy<2.5\n' >"$CONSTRAINTS"
pip_ install -q --ignore-requires-python --prefer-binary -c "$CONSTRAINTS" "nemo-gym==0.4.0" "pytest>=8" "pytest-asyncio>=0.23" "pytest-timeout>=2" httpx
pip_ install -q -e .
installed
