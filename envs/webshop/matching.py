"""WebShop's fuzzy matching, reproduced exactly (ENVS-NEXT §1.5 "exactness details").

The original calls `thefuzz.fuzz.token_set_ratio`, which stringifies its inputs (a goal option is a `(name, value)`
tuple), drops non-ASCII characters, applies rapidfuzz's `default_process` and rounds the score to an integer; the
test is strict `> 85`. `normalize_color` returns the first `COLOR_SET` entry that occurs in its argument (for a
tuple: equals one of its elements).
"""

from __future__ import annotations

from typing import Any

from rapidfuzz import fuzz
from rapidfuzz.utils import default_process

from .lexicon import COLOR_SET

THRESHOLD = 85


def _process(value: Any) -> str:
    text = value if isinstance(value, str) else str(value)
    return default_process(text.encode("ascii", "ignore").decode("ascii"))


def token_set_score(a: Any, b: Any) -> int:
    """thefuzz's `token_set_ratio`: processed, rounded half-to-even as Python's `round` does."""
    pa, pb = _process(a), _process(b)
    if not pa or not pb:
        return 0
    return int(round(fuzz.token_set_ratio(pa, pb)))


def normalize_color(value: Any) -> Any:
    for color in COLOR_SET:
        if color in value:
            return color
    return value


def option_matches(purchased: str, goal: Any) -> bool:
    """Does a purchased option value satisfy a goal option (a value, or a `(name, value)` tuple)?"""
    return token_set_score(normalize_color(purchased), normalize_color(goal)) > THRESHOLD
