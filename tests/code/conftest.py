"""Shared fixtures: the real local sandbox (no test double: the harness must prove itself on real isolation)."""

from __future__ import annotations

import pytest

from rlvr_gym.envs.code.execution import CodeExecutor
from rlvr_gym.envs.code.tasks import HumanEvalTasks


@pytest.fixture(scope="session")
def executor() -> CodeExecutor:
    from rlvr_gym.sandboxes import get_sandbox

    return CodeExecutor(get_sandbox("local"))


@pytest.fixture(scope="session")
def humaneval():
    source = HumanEvalTasks(split="eval")
    return [source.task(i) for i in range(len(source))]
