"""Red-team fixtures: two separate local sandboxes, so a verdict can be compared across processes whose address
layouts, clocks and entropy differ (one sandbox's template process serves many jobs)."""

from __future__ import annotations

import pytest

from rlvr_gym.sandboxes import create_sandbox


@pytest.fixture(scope="session")
def two_sandboxes():
    boxes = (create_sandbox("local"), create_sandbox("local"))
    yield boxes
    for box in boxes:
        box.close()
