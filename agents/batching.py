"""Micro-batching: gather concurrent single requests from many episodes into model-sized batches.

The rollout runner runs many episodes at once, each calling `policy.generate([one request])`. An in-process model
is only efficient when those calls are fused, so requests wait a few milliseconds in a queue and then run together
(up to `max_batch_size`) in a worker thread, keeping the event loop free while the model computes. While one batch
runs, new requests queue up and form the next batch, which gives continuous batching at episode granularity.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


class MicroBatcher(Generic[Item, Result]):
    """Runs `run_batch(items) -> results` (sync, same order) over queued items; one batch at a time per process."""

    def __init__(
        self,
        run_batch: Callable[[list[Item]], list[Result]],
        *,
        max_batch_size: int = 8,
        wait_s: float = 0.01,
    ) -> None:
        if max_batch_size < 1:
            raise ValueError("max_batch_size must be >= 1")
        self.run_batch = run_batch
        self.max_batch_size = max_batch_size
        self.wait_s = wait_s
        self.lock = threading.Lock()  # also held by callers that must not overlap generation (e.g. a train step)
        self.batch_sizes: list[int] = []  # observed batch sizes, for tests and benchmarks
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pending: list[tuple[Item, asyncio.Future[Result]]] = []
        self._wakeup: asyncio.Event | None = None
        self._worker: asyncio.Task[None] | None = None

    async def submit(self, items: Sequence[Item]) -> list[Result]:
        """Queue items and wait for their results (exceptions of a failed batch propagate to each caller)."""
        loop = asyncio.get_running_loop()
        self._bind(loop)
        futures = [loop.create_future() for _ in items]
        self._pending.extend(zip(items, futures, strict=True))
        assert self._wakeup is not None
        self._wakeup.set()
        return list(await asyncio.gather(*futures))

    def _bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """Queues and the worker belong to one event loop; a new loop (a new asyncio.run) gets fresh ones."""
        if self._loop is loop and self._worker is not None and not self._worker.done():
            return
        self._loop = loop
        self._pending = []
        self._wakeup = asyncio.Event()
        self._worker = loop.create_task(self._work(), name="rlvr-microbatcher")

    async def _work(self) -> None:
        assert self._wakeup is not None
        while True:
            await self._wakeup.wait()
            self._wakeup.clear()
            if len(self._pending) < self.max_batch_size and self.wait_s > 0:
                await asyncio.sleep(self.wait_s)  # let the other episodes of this tick add their requests
            while self._pending:
                batch = self._pending[: self.max_batch_size]
                del self._pending[: self.max_batch_size]
                batch = [(item, fut) for item, fut in batch if not fut.cancelled()]
                if not batch:
                    continue
                self.batch_sizes.append(len(batch))
                try:
                    results = await asyncio.to_thread(self._run_locked, [item for item, _ in batch])
                except BaseException as exc:  # noqa: B036 - every waiter must learn about the failure
                    for _, fut in batch:
                        if not fut.done():
                            fut.set_exception(exc)
                    if isinstance(exc, asyncio.CancelledError):
                        raise
                    continue
                for (_, fut), result in zip(batch, results, strict=True):
                    if not fut.done():
                        fut.set_result(result)

    def _run_locked(self, items: list[Item]) -> list[Result]:
        with self.lock:
            results = self.run_batch(items)
        if len(results) != len(items):
            raise RuntimeError(f"batch function returned {len(results)} results for {len(items)} items")
        return results
