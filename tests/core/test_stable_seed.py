"""Process-independent seeds, pinned to literal values: the same env id, seed and index must give the same task and
the same episode seeds in every process and release (issue 39: `rollout.stable_int` and `family.stable_seed` are
one hash, so either can be kept without moving a single seed)."""

from __future__ import annotations

import random

import pytest

from rlvr_gym.family import stable_seed
from rlvr_gym.rollout import plan_episodes, stable_int


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


def test_stable_int_is_stable_seed_of_one_text_at_31_bits():
    rng = random.Random(0)
    texts = [
        "",
        "a|b",
        "7:step:0",
        "é☃",
        *(f"{rng.randrange(10**9)}|index={rng.randrange(99)}|{k}" for k in range(500)),
    ]
    assert all(stable_int(t) == stable_seed(t, bits=31) for t in texts)
    assert stable_int("3|index=4|1") == stable_seed(3, "index=4", 1, bits=31)  # parts join with "|"
