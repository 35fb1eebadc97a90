"""Lock-step batching for training rollouts: deterministic batch composition, hence exactly reproducible runs.

The HF policy's micro-batcher fuses whatever requests arrive within a few milliseconds, so batch shapes depend on
thread timing; different left-padding changes float results (1e-6-level log-prob noise, and rarely a flipped
sample), which breaks exact resume. Here a round fires only when every live episode of the collection is waiting
for the policy; the requests are sorted by their (per-episode, per-turn) seed and cut into fixed-size chunks.
Batches are then a pure function of the seeds and weights. Cost: an episode whose env step is slow holds the
round (training rollouts are synchronous rounds anyway, as in verl's multi-turn loop).
"""

from __future__ import annotations

import asyncio
from typing import Any

from rlvr_gym.types import Episode, Generation, GenerationRequest


class LockstepPolicy:
    """Wraps a policy (HFPolicy or any `generate`); call `begin(n)` before a collection, pass `on_episode`."""

    def __init__(self, inner: Any, *, max_batch_size: int = 64) -> None:
        self.inner = inner
        self.max_batch_size = max_batch_size
        self.live = 0
        self._pending: list[tuple[GenerationRequest, asyncio.Future[Generation]]] = []
        self.batch_sizes: list[int] = []

    def __getattr__(self, name: str) -> Any:  # tokenizer, eos_ids, lock ... of the wrapped policy
        return getattr(self.inner, name)

    def begin(self, episodes: int) -> None:
        self.live = episodes
        self._pending = []

    def on_episode(self, episode: Episode) -> None:
        self.live -= 1
        self._maybe_flush()

    async def generate(self, requests: list[GenerationRequest]) -> list[Generation]:
        loop = asyncio.get_running_loop()
        futures = [loop.create_future() for _ in requests]
        self._pending.extend(zip(requests, futures, strict=True))
        self._maybe_flush()
        return list(await asyncio.gather(*futures))

    def _maybe_flush(self) -> None:
        if self._pending and len(self._pending) >= self.live:
            batch, self._pending = self._pending, []
            asyncio.get_running_loop().create_task(self._run(batch))

    async def _run(self, batch: list[tuple[GenerationRequest, asyncio.Future[Generation]]]) -> None:
        batch.sort(key=lambda item: (item[0].sampling.seed is None, item[0].sampling.seed or 0))
        for start in range(0, len(batch), self.max_batch_size):
            chunk = batch[start : start + self.max_batch_size]
            requests = [req for req, _ in chunk]
            try:
                sync = getattr(self.inner, "generate_sync", None)
                results = await (asyncio.to_thread(sync, requests) if sync else self.inner.generate(requests))
            except Exception as exc:  # every waiting episode learns about the failure
                for _, fut in chunk:
                    if not fut.done():
                        fut.set_exception(exc)
                continue
            for (_, fut), result in zip(chunk, results, strict=True):
                if not fut.done():
                    fut.set_result(result)
