"""A real local sandbox for the AZR executor (no test double: verdicts must come from real runs)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def azr_executor():
    from rlvr_gym.envs.azr.execution import AZRExecutor
    from rlvr_gym.sandboxes import get_sandbox

    return AZRExecutor(get_sandbox("local"), workers=4)
