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


class _InlineTimeout(BaseException):
    """Raised by the SIGALRM handler inside an inline env call that ran past its limit (BaseException, so that an
    env's own `except Exception` cannot swallow it)."""


class InlineCalls:
    """Runs env calls that have proven cheap on the event-loop thread itself, with the timeout kept by SIGALRM.

    A thread hop costs two wake-ups (tens of µs idle, milliseconds on a loaded machine), far more than a 20 µs
    verifier. So the first `probe_calls` calls of a run go through the worker threads and are timed there; when
    nearly all of them took under `fast_s`, later calls run inline. The limit still holds: an interval timer raises
    `_InlineTimeout` in the call (a sleeping or looping env is interrupted, as a thread path would abandon it; an
    env blocked inside C code holding the interpreter lock needs process isolation in either path). Inline calls
    stay watched: one over `stall_s`, or more than ~10% of recent ones over `slow_s` (a few are: the OS preempts
    us on a busy machine), sends the rest of the run back to the worker threads, so a slow env stalls the loop
    little. Used only where a timer is free to take: on the main thread, with no other SIGALRM handler or timer.
    """

    def __init__(
        self, *, probe_calls: int = 16, fast_s: float = 0.001, slow_s: float = 0.005, stall_s: float = 0.05
    ) -> None:
        self.probe_calls = probe_calls
        self.fast_s = fast_s
        self.slow_s = slow_s
        self.stall_s = stall_s
        self._probed = 0
        self._probe_slow = 0
        self._slow_score = 0.0
        self._disabled = False
        self._active = False
        self._fired = False
        self._previous_handler: Any = None
        self._installed = False
        self.inline_calls = 0

    @property
    def enabled(self) -> bool:
        return not self._disabled and self._probed >= self.probe_calls

    def observe(self, seconds: float) -> None:
        """A thread-path call's duration (called from worker threads; a lost update only delays the switch)."""
        self._probed += 1
        if seconds > self.fast_s:
            self._probe_slow += 1
            if self._probe_slow > self.probe_calls // 8:
                self._disabled = True

    def _judge(self, seconds: float) -> None:
        """Keep a decaying count of slow inline calls (~10% of the last ~50 calls disables)."""
        if seconds > self.stall_s:
            self._disabled = True
        self._slow_score = self._slow_score * 0.98 + (1.0 if seconds > self.slow_s else 0.0)
        if self._slow_score > 5.0:
            self._disabled = True

    def disable(self) -> None:
        self._disabled = True

    def usable(self, timeout: float | None) -> bool:
        """Whether the next call may run inline (a limit to keep and a free timer on the main thread)."""
        if not self.enabled or timeout is None or timeout <= 0:
            return False
        if not self._installed:
            return self._install()
        return True

    def _install(self) -> bool:
        import signal

        if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
            self._disabled = True
            return False
        previous = signal.getsignal(signal.SIGALRM)
        if previous not in (signal.SIG_DFL, None) or signal.getitimer(signal.ITIMER_REAL) != (0.0, 0.0):
            self._disabled = True  # someone else (pytest-timeout, the application) owns the timer
            return False
        self._previous_handler = previous
        signal.signal(signal.SIGALRM, self._alarm)
        self._installed = True
        return True

    def _alarm(self, signum: int, frame: Any) -> None:
        if self._active:
            self._fired = True
            raise _InlineTimeout

    def call(self, fn: Callable[..., Any], args: tuple[Any, ...], timeout: float) -> tuple[bool, Any]:
        """Run `fn(*args)` here; returns (False, None) on timeout, else (True, result). Env exceptions propagate."""
        import signal
        import time

        self._fired = False
        t0 = time.perf_counter()
        try:
            self._active = True
            signal.setitimer(signal.ITIMER_REAL, timeout)
            try:
                result = fn(*args)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
                self._active = False
        except _InlineTimeout:
            self._disabled = True
            return False, None
        if self._fired:  # the env caught our exception and returned anyway: the call still overran
            self._disabled = True
            return False, None
        self.inline_calls += 1
        self._judge(time.perf_counter() - t0)
        return True, result

    def close(self) -> None:
        if self._installed:
            import signal

            signal.signal(signal.SIGALRM, self._previous_handler or signal.SIG_DFL)
            self._installed = False
