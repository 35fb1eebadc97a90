"""Worker threads for sync env calls, with wake-ups coalesced in both directions.

A plain `run_in_executor` costs one thread wake-up per call and one event-loop wake-up per result; with tiny env
steps (a 20 µs verifier) those hand-offs dominate a rollout. Here idle workers are only woken when there is nobody
busy to pick the job up, and finished results go back to the loop in batches: one loop wake-up for all results
that are ready. Jobs stay in one shared queue, so a hung call blocks only its own thread, and `replace_one` adds
a fresh thread for each call the runner gives up on, so hung calls never starve the pool.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Callable
from typing import Any


class EnvWorkers:
    def __init__(self, loop: asyncio.AbstractEventLoop, threads: int, name: str = "rlvr-env") -> None:
        self._loop = loop
        self._jobs: deque[tuple[Callable[[], Any], asyncio.Future]] = deque()
        self._outbox: deque[tuple[asyncio.Future, bool, Any]] = deque()
        self._wake = threading.Condition()
        self._idle = 0
        self._closed = False
        self._delivery_pending = False
        self._name = name
        self._threads: list[threading.Thread] = []
        for _ in range(threads):
            self._spawn()

    def _spawn(self) -> None:
        thread = threading.Thread(target=self._work, name=f"{self._name}-{len(self._threads)}", daemon=True)
        self._threads.append(thread)
        thread.start()

    def replace_one(self) -> None:
        """Add a thread in place of one stuck in a call that timed out (that thread is abandoned, not killed)."""
        if not self._closed:
            self._spawn()

    def submit(self, fn: Callable[[], Any]) -> asyncio.Future:
        """Queue `fn` (from the loop thread); the returned future resolves on the loop."""
        future = self._loop.create_future()
        self._jobs.append((fn, future))
        with self._wake:
            if self._idle:
                self._wake.notify()
        return future

    def _work(self) -> None:
        while True:
            try:
                fn, future = self._jobs.popleft()
            except IndexError:
                with self._wake:
                    if self._closed:
                        return
                    if not self._jobs:
                        self._idle += 1
                        self._wake.wait()
                        self._idle -= 1
                continue
            try:
                self._outbox.append((future, True, fn()))
            except BaseException as exc:  # delivered to the awaiting coroutine, never lost
                self._outbox.append((future, False, exc))
            if not self._delivery_pending:
                self._delivery_pending = True
                try:
                    self._loop.call_soon_threadsafe(self._deliver)
                except RuntimeError:  # the loop is closed: nobody is waiting any more
                    return

    def _deliver(self) -> None:
        self._delivery_pending = False
        while self._outbox:
            future, ok, value = self._outbox.popleft()
            if future.done():  # cancelled by a timeout
                continue
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)

    def close(self) -> None:
        """Stop idle workers; a thread stuck in a hung env call is a daemon and dies with the process."""
        with self._wake:
            self._closed = True
            self._wake.notify_all()
