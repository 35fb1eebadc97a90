"""Backend selection for front ends, without starting Ray (these must not even import it: see session.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rlvr_gym.scale import connect, run_backend


def test_local_backend_passes_isolation_and_limits_through():
    with run_backend("local", "rlvr/Math-v0", isolation="process", reset_timeout_s=5.0) as options:
        assert options == {"isolation": "process", "reset_timeout_s": 5.0, "episode_timeout_s": None}


@pytest.mark.parametrize(
    ("backend", "kwargs", "message"),
    [
        ("local", {"address": "127.0.0.1:6379"}, "needs the Ray backend"),
        ("ray", {"isolation": "process"}, "does not apply to the Ray backend"),
        ("dask", {}, "backend must be one of"),
    ],
)
def test_contradictory_backend_settings_are_refused(backend, kwargs, message):
    with pytest.raises(ValueError, match=message), run_backend(backend, "rlvr/Math-v0", **kwargs):
        pass


def test_ray_client_addresses_are_refused():
    with pytest.raises(ValueError, match="Ray Client"):
        connect("ray://127.0.0.1:10001")


def test_importing_the_scale_package_does_not_import_ray():
    """Ray reads its auth mode once, at import: rlvr_gym.scale must get to set it first."""
    code = "import sys, rlvr_gym.scale; print('ray' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr
