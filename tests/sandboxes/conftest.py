"""Sandbox test fixtures: one shared instance per backend, parametrized so every test runs on both.

The container backend needs podman (or Docker) and the image from scripts/setup_sandbox.sh; the fixture starts
``podman system service`` itself when nothing answers. Without them the container cases are skipped with the
reason, unless RLVR_REQUIRE_CONTAINER=1 (CI), which turns the skip into a failure.
"""

from __future__ import annotations

import os

import pytest

from rlvr_gym.sandboxes import SandboxUnavailable, create_sandbox

BACKEND_PARAMS = [
    pytest.param("local", id="local"),
    pytest.param("docker", id="docker", marks=[pytest.mark.container, pytest.mark.integration]),
]
_instances: dict[str, object] = {}
_failures: dict[str, str] = {}


def _get(backend: str):
    if backend in _failures:
        _unavailable(backend, _failures[backend])
    if backend not in _instances:
        try:
            _instances[backend] = create_sandbox(backend)
        except SandboxUnavailable as exc:
            _failures[backend] = str(exc)
            _unavailable(backend, str(exc))
    return _instances[backend]


def _unavailable(backend: str, why: str):
    message = f"{backend} sandbox unavailable: {why}"
    if backend == "docker" and os.environ.get("RLVR_REQUIRE_CONTAINER") == "1":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(params=BACKEND_PARAMS)
def sandbox(request):
    """The shared sandbox of each backend (tests run once per backend)."""
    return _get(request.param)


def pytest_sessionfinish(session, exitstatus):
    for box in _instances.values():
        box.close()
    _instances.clear()
