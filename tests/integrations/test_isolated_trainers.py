"""Trainer adapters whose packages pin versions our main venv cannot hold run in their own venvs.

Each case runs a check file from `tests/isolated/` with that venv's Python (set up by the named script). Without
the venv the case is skipped, unless RLVR_REQUIRE_ISOLATED=1 (scripts/test.sh sets it), then it fails.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CASES = {
    "verl": (".venv-verl", "scripts/setup_verl.sh", "tests/isolated/verl/check_verl_loop.py"),
    "verifiers": (".venv-verifiers", "scripts/setup_verifiers.sh", "tests/isolated/verifiers/check_verifiers_env.py"),
    "nemo-gym": (".venv-nemo", "scripts/setup_nemo_gym.sh", "tests/isolated/nemo_gym/check_nemo_gym_server.py"),
}


@pytest.mark.integration
@pytest.mark.parametrize("name", sorted(CASES))
def test_adapter_in_its_own_venv(name):
    venv, setup, check = CASES[name]
    python = ROOT / venv / "bin" / "python"
    if not python.exists():
        message = f"{venv} is missing: run `bash {setup}`"
        if os.environ.get("RLVR_REQUIRE_ISOLATED") == "1":
            pytest.fail(message)
        pytest.skip(message)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    proc = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", check],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    output = proc.stdout[-6000:] + proc.stderr[-3000:]
    sys.stdout.write(output)
    assert proc.returncode == 0, f"{check} failed in {venv}:\n{output}"
    assert " passed" in proc.stdout and " skipped" not in proc.stdout, output
