"""Lock-step batching: a round fires only when every live episode waits; batches are sorted by seed."""

from __future__ import annotations

import asyncio
import random

from rlvr_gym.algorithms.lockstep import LockstepPolicy
from rlvr_gym.types import Generation, GenerationRequest, SamplingParams


class Recorder:
    def __init__(self):
        self.batches = []

    def generate_sync(self, requests):
        self.batches.append([r.sampling.seed for r in requests])
        return [Generation(text=str(r.sampling.seed)) for r in requests]


async def test_rounds_are_deterministic_whatever_the_arrival_order():
    inner = Recorder()
    policy = LockstepPolicy(inner, max_batch_size=2)
    seeds = [5, 1, 4, 2]
    policy.begin(len(seeds))

    async def episode(seed, turns):
        for t in range(turns):
            await asyncio.sleep(random.random() / 100)
            out = await policy.generate([GenerationRequest(prompt="x", sampling=SamplingParams(seed=seed * 10 + t))])
            assert out[0].text == str(seed * 10 + t)
        policy.on_episode(None)

    await asyncio.gather(*(episode(s, 2 if s != 4 else 1) for s in seeds))
    # round 1: all four first turns sorted by seed, in chunks of 2; round 2: the three still-live episodes
    assert inner.batches == [[10, 20], [40, 50], [11, 21], [51]]
