"""Process-independent seeds, pinned to literal values: the same env id, seed and index must give the same task and
the same episode seeds in every process and release (issue 39: `rollout.stable_int` was `family.stable_seed` of one
text at 31 bits and was folded into it; these values were pinned before, so no seed moved)."""

from __future__ import annotations

import pytest

from rlvr_gym.family import stable_seed
from rlvr_gym.rollout import plan_episodes


@pytest.mark.parametrize(
    "parts, bits, value",
    [
        (("split", "abc"), 63, 8254244112260815820),
        (("math", "train", 0, 17, 0), 63, 2029157442655520962),  # `TaskSource.rng(17)` of math/train, seed 0
        (("check-env", "rlvr/Math-v0", 3, "x"), 63, 5884027587416546933),
        (("7:step:0",), 31, 1621217600),
    ],
)
def test_stable_seed_values(parts, bits, value):
    assert stable_seed(*parts, bits=bits) == value


def test_episode_seeds():
    assert [s.seed for s in plan_episodes("rlvr/Math-v0", [0, 5], 2, seed=7)] == [
        735324087,
        907786756,
        2036540967,
        1456896538,
    ]
