"""Shared fixtures: real sandboxes (no test double: the judge must prove itself on real isolation).

`executor` is the local backend; `backend_executor` runs a test on both backends (the container one is skipped
with its reason when podman/Docker is missing, and fails instead when RLVR_REQUIRE_CONTAINER=1, as in CI).
"""

from __future__ import annotations

import os

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


@pytest.fixture(
    scope="session",
    params=[pytest.param("local", id="local"), pytest.param("docker", id="docker", marks=pytest.mark.container)],
)
def backend_executor(request) -> CodeExecutor:
    from rlvr_gym.sandboxes import SandboxUnavailable, get_sandbox

    try:
        return CodeExecutor(get_sandbox(request.param))
    except SandboxUnavailable as exc:
        if request.param == "docker" and os.environ.get("RLVR_REQUIRE_CONTAINER") == "1":
            pytest.fail(f"container sandbox unavailable: {exc}")
        pytest.skip(f"{request.param} sandbox unavailable: {exc}")
