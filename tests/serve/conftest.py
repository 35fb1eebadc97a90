"""The live env server the serve tests share, as the CLI runs it (with a token)."""

from __future__ import annotations

import pytest
from serve_kit import ENV, TOKEN, live

from rlvr_gym.serve.app import create_app, server_policy
from rlvr_gym.serve.sessions import SessionLimits


@pytest.fixture(scope="package")
def server():
    """(base URL, app) of a live server on 127.0.0.1 with 4 sessions."""
    app = create_app(ENV, limits=SessionLimits(max_sessions=4, idle_s=60), policy=server_policy(TOKEN))
    with live(app) as base:
        yield base, app
