"""A lazily opened sandbox shared by every copy of an executor, and one executor per process.

Executors of the code, AZR and robot families hold a sandbox they open on first use. `gymnasium.make` deep-copies
env kwargs, so a copied executor must stay a handle on the same sandbox rather than open a second one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

from .base import Sandbox

T = TypeVar("T")


class SandboxHandle:
    """Owns (or borrows) one sandbox: `sandbox` opens the default backend (or `backend`) on first use."""

    def __init__(self, sandbox: Sandbox | None = None, backend: str | None = None) -> None:
        self._sandbox = sandbox
        self._backend = backend
        self._lock = threading.Lock()

    def __deepcopy__(self, memo: dict) -> SandboxHandle:
        return self

    @property
    def sandbox(self) -> Sandbox:
        with self._lock:
            if self._sandbox is None:
                from . import get_sandbox

                self._sandbox = get_sandbox(self._backend) if self._backend else get_sandbox()
            return self._sandbox

    def close(self) -> None:
        with self._lock:
            if self._sandbox is not None:
                self._sandbox.close()
                self._sandbox = None


def process_wide(factory: Callable[[], T]) -> Callable[[], T]:
    """A function returning one `factory()` instance per process, built on first call (thread-safe)."""
    lock = threading.Lock()
    made: list[T] = []

    def shared() -> T:
        with lock:
            if not made:
                made.append(factory())
            return made[0]

    shared.__doc__ = f"The process-wide {getattr(factory, '__name__', 'instance')}, created on first use."
    return shared
