"""Gymnasium's `AsyncVectorEnv` over chat envs, with its default `shared_memory=True`.

Gymnasium moves a worker's observation through a shared buffer created per observation space; our spaces (lists
of message dicts, free text) have no fixed size, so each env gets one slot of `SLOT_BYTES` holding the observation
pickled (what the pipe would carry with `shared_memory=False`) behind its length. An observation larger than the
slot is refused with the fix in the message; `RLVR_GYM_SHARED_OBS_BYTES` sets the slot size.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import numpy as np
from gymnasium.vector.utils.shared_memory import (
    create_shared_memory,
    read_from_shared_memory,
    write_to_shared_memory,
)

from .spaces import MessagesSpace, TextSpace

SLOT_BYTES = int(os.environ.get("RLVR_GYM_SHARED_OBS_BYTES", 1 << 20))  # the largest built-in observation: ~320 kB
_HEADER = 8  # the pickle's length, little-endian


def _slots(shared: Any, n: int) -> np.ndarray:
    return np.frombuffer(shared.get_obj(), dtype=np.uint8).reshape(n, -1)


@create_shared_memory.register(TextSpace)
@create_shared_memory.register(MessagesSpace)
def _create(space: Any, n: int = 1, ctx: ModuleType = multiprocessing) -> Any:
    return ctx.Array("B", n * (_HEADER + SLOT_BYTES))


@write_to_shared_memory.register(TextSpace)
@write_to_shared_memory.register(MessagesSpace)
def _write(space: Any, index: int, value: Any, shared: Any) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    slot = _slots(shared, len(shared) // (_HEADER + SLOT_BYTES))[index]
    if len(data) > len(slot) - _HEADER:
        raise ValueError(f"an observation of {len(data)} bytes does not fit the {SLOT_BYTES}-byte shared slot: set "
                         "RLVR_GYM_SHARED_OBS_BYTES, or pass vector_kwargs={'shared_memory': False}")
    slot[:_HEADER] = np.frombuffer(len(data).to_bytes(_HEADER, "little"), dtype=np.uint8)
    slot[_HEADER:_HEADER + len(data)] = np.frombuffer(data, dtype=np.uint8)


class SharedObservations(Sequence):
    """The batch as Gymnasium expects it from shared memory: read once, it shows what the workers wrote last (each
    item decoded on access); `deepcopy` (Gymnasium's default `copy=True`) gives a plain tuple."""

    def __init__(self, shared: Any, n: int) -> None:
        self._slots = _slots(shared, n)

    def __len__(self) -> int:
        return len(self._slots)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(len(self))[index])
        slot = self._slots[index]
        size = int.from_bytes(slot[:_HEADER].tobytes(), "little")  # 0 before the first write: no observation yet
        return pickle.loads(slot[_HEADER:_HEADER + size].tobytes()) if size else None

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[Any, ...]:
        return tuple(self)

    def __repr__(self) -> str:
        return f"SharedObservations({tuple(self)!r})"


@read_from_shared_memory.register(TextSpace)
@read_from_shared_memory.register(MessagesSpace)
def _read(space: Any, shared: Any, n: int = 1) -> SharedObservations:
    return SharedObservations(shared, n)
