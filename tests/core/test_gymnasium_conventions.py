"""What a Gymnasium user types works as they expect it to (#41): `gymnasium.make` right after `import rlvr_gym` (or
with Gymnasium's `module:` prefix and no import), `register_envs`, and `make_vec` in both modes with its defaults.

Gymnasium 1.x has no plug-in loader (its `gymnasium.envs` entry points were dropped in 1.0), so the `module:` prefix
is how it loads an env package it was not told to import.
"""

from __future__ import annotations

import json
import subprocess
import sys

import gymnasium as gym
import pytest

import rlvr_gym
from rlvr_gym.registry import declared_ids

FRESH_IMPORT = """
import json, sys
import gymnasium as gym
import rlvr_gym
families = sorted(m for m in sys.modules if m.startswith("rlvr_gym.envs"))
gym.register_envs(rlvr_gym)
env = gym.make("rlvr/Math-v0")
_, info = env.reset(seed=3)
print(json.dumps({"families": families, "task": info["task_id"], "cls": type(env.unwrapped).__name__,
                  "difficulty": env.unwrapped.source.config.difficulty}))
"""
MODULE_PREFIX = """
import json, sys
import gymnasium as gym
before = "rlvr_gym" in sys.modules
env = gym.make("rlvr_gym:rlvr/Sokoban-v0")
print(json.dumps({"before": before, "task": env.reset(seed=1)[1]["task_id"]}))
"""


def run_fresh(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return json.loads(out.stdout.splitlines()[-1])


def test_gymnasium_make_right_after_import_and_with_the_module_prefix():
    fresh = run_fresh(FRESH_IMPORT)
    assert fresh["families"] == []  # the import stays light: ids are declared from package metadata
    local = rlvr_gym.make("rlvr/Math-v0")
    assert fresh["task"] == local.reset(seed=3)[1]["task_id"] and fresh["cls"] == "MathEnv"
    assert fresh["difficulty"] == local.source.config.difficulty == 3  # the registered defaults, not the class's
    prefixed = run_fresh(MODULE_PREFIX)
    assert prefixed == {"before": False, "task": rlvr_gym.make("rlvr/Sokoban-v0").reset(seed=1)[1]["task_id"]}


def test_every_env_of_this_package_is_declared():
    """An id registered by our plug-ins but missing from pyproject's `rlvr_gym.env_ids` fails here."""
    ours = {info.id for info in rlvr_gym.list_envs() if info.entry_point.startswith("rlvr_gym.")}
    assert ours <= declared_ids(), sorted(ours - declared_ids())


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_make_vec_in_both_modes_with_gymnasium_defaults(mode):
    envs = gym.make_vec("rlvr/MathArithmetic-v0", num_envs=2, vectorization_mode=mode)
    try:
        observations, infos = envs.reset(seed=[4, 5])
        single = rlvr_gym.make("rlvr/MathArithmetic-v0")
        assert list(observations) == [single.reset(seed=s)[0] for s in (4, 5)]
        answers = [single.get_task(i).reference_actions[0] for i in infos["task_index"]]
        _, rewards, terminated, _, infos = envs.step([answers[0], "no idea"])
        assert rewards.tolist() == [1.0, 0.0] and terminated.all()
        assert infos["verdict"][0].passed and not infos["verdict"][1].passed
    finally:
        envs.close()
