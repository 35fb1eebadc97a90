"""Gymnasium spaces for chat envs: any text action, and observations that are lists of message dicts.

Gymnasium's own `Text` space checks each character against a fixed charset, which cannot describe arbitrary
model output; these spaces accept any string up to a length and still sample reproducibly for `check_env`.
"""

from __future__ import annotations

import string
from typing import Any

import numpy as np
from gymnasium import spaces

_ROLES = ("system", "user", "assistant", "tool")
_SAMPLE_CHARS = np.array(list(string.printable + "éß→∑😀"))


def _sample_text(rng: np.random.Generator, max_length: int) -> str:
    length = int(rng.integers(0, min(max_length, 64) + 1))
    return "".join(rng.choice(_SAMPLE_CHARS, size=length))


class TextSpace(spaces.Space[str]):
    """Any Python string of at most `max_length` characters."""

    def __init__(self, max_length: int = 1_000_000, seed: int | None = None) -> None:
        self.max_length = max_length
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        return _sample_text(self.np_random, self.max_length)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"TextSpace(max_length={self.max_length})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, TextSpace) and other.max_length == self.max_length


class MessagesSpace(spaces.Space[list]):
    """A list of OpenAI-style message dicts (`role`, `content`, optional tool fields)."""

    def __init__(self, max_messages: int = 64, max_length: int = 1_000_000, seed: int | None = None) -> None:
        self.max_messages = max_messages
        self.max_length = max_length
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def sample(self, mask: Any = None, probability: Any = None) -> list[dict[str, Any]]:
        count = int(self.np_random.integers(1, 3))
        return [
            {"role": str(self.np_random.choice(_ROLES)), "content": _sample_text(self.np_random, self.max_length)}
            for _ in range(count)
        ]

    def contains(self, x: Any) -> bool:
        if not isinstance(x, list) or len(x) > self.max_messages:
            return False
        for message in x:
            if not isinstance(message, dict) or message.get("role") not in _ROLES:
                return False
            content = message.get("content")
            if isinstance(content, str):
                if len(content) > self.max_length:
                    return False
            elif content is not None and not isinstance(content, list):
                return False
        return True

    def __repr__(self) -> str:
        return f"MessagesSpace(max_messages={self.max_messages})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, MessagesSpace) and other.max_messages == self.max_messages
