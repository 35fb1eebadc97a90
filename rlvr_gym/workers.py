"""Worker threads for sync env calls: started only when needed, wake-ups coalesced in both directions.

A plain `run_in_executor` costs one thread wake-up per call and one event-loop wake-up per result, and a pool sized
for 512 episodes in flight starts 512 threads that then fight over the interpreter lock. Here jobs wait in one C
queue (`SimpleQueue`: a blocked `get` is woken by `put` without Python-level locks), a new thread is started only
when jobs have waited two GIL switch intervals (10 ms) with no idle thread and no thread has taken a job in that time (the busy
threads are blocked), and then at most as many as are running (doubling): fast, GIL-bound env calls keep running
on one or two threads however many episodes are in flight, while calls that block in I/O still get a thread each
after a few doublings. (Starting hundreds of threads at once cost ~20 ms a start under GIL contention and made 512
episodes in flight 4x slower than 64.) Finished results go back to the loop in batches: one loop wake-up for all
results that are ready. A hung call blocks only its own thread; `replace_one`
raises the thread limit for each call the runner gives up on, so hung calls never starve the pool.
"""

from __future__ import annotations

import asyncio
import queue
import sys
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

# How long queued jobs may wait, with no job taken by any thread, before more threads start: two GIL switch
# intervals, so that threads merely waiting for the interpreter lock (the loop thread holds it between switches)
# are not mistaken for blocked ones.
GROW_AFTER_S = 2 * sys.getswitchinterval()
EAGER_THREADS = 2  # threads started at once, without the wait


class EnvWorkers:
    def __init__(self, loop: asyncio.AbstractEventLoop, threads: int, name: str = "rlvr-env") -> None:
        self._loop = loop
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], asyncio.Future] | None] = queue.SimpleQueue()
        self._outbox: deque[tuple[asyncio.Future, bool, Any]] = deque()
        self._lock = threading.Lock()
        self._idle = 0  # threads blocked in `get`
        self._queued = 0  # jobs put and not yet taken
        self._taken = 0  # jobs taken so far (progress, read by `_grow`)
        self._started = 0
        self._limit = threads
        self._closed = False
        self._delivery_pending = False
        self._grow_pending = False
        self._name = name

    @property
    def threads(self) -> int:
        """Threads started so far (the limit is only reached when calls block)."""
        return self._started

    def _spawn(self) -> None:
        self._started += 1
        thread = threading.Thread(target=self._work, name=f"{self._name}-{self._started}", daemon=True)
        thread.start()

    def replace_one(self) -> None:
        """A thread is stuck in a call that timed out (abandoned, not killed): allow one more in its place."""
        if not self._closed:
            self._limit += 1
            if self._missing() > 0:
                self._spawn()

    def submit(self, fn: Callable[[], Any]) -> asyncio.Future:
        """Queue `fn` (from the loop thread); the returned future resolves on the loop."""
        future = self._loop.create_future()
        with self._lock:
            self._queued += 1
            short = self._queued > self._idle
        self._jobs.put((fn, future))
        if short:
            if self._started < EAGER_THREADS:
                self._spawn()
            elif not self._grow_pending and self._started < self._limit:
                self._schedule_grow()
        return future

    def _schedule_grow(self) -> None:
        self._grow_pending = True
        self._loop.call_later(GROW_AFTER_S, self._grow, self._taken)

    def _missing(self) -> int:
        with self._lock:
            return self._queued - self._idle

    def _grow(self, taken_before: int) -> None:
        """Start threads for waiting jobs if the busy threads took none since `taken_before` (they are blocked)."""
        self._grow_pending = False
        if self._closed or self._missing() <= 0 or self._started >= self._limit:
            return
        if self._taken == taken_before:
            for _ in range(min(self._missing(), self._limit - self._started, max(1, self._started))):
                self._spawn()
        if self._missing() > 0 and self._started < self._limit:
            self._schedule_grow()

    def _work(self) -> None:
        while True:
            with self._lock:
                self._idle += 1
            job = self._jobs.get()
            with self._lock:
                self._idle -= 1
                self._queued -= 1
                self._taken += 1
            if job is None:
                return
            fn, future = job
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
        self._closed = True
        for _ in range(self._started):
            with self._lock:
                self._queued += 1
            self._jobs.put(None)
