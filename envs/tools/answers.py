"""Answer comparison: executed outputs vs expected values, and final text answers vs expected values.

Outputs are compared by value (numbers with a small tolerance, so an equally valid execution path that rounds
differently still gets credit; strings case- and space-insensitively; lists element by element, order-aware).
"""

from __future__ import annotations

import math
import re
from typing import Any

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?|-?\.\d+")
_ANSWER = re.compile(r"answer\s*[:=]\s*", re.IGNORECASE)


def values_match(got: Any, expected: Any, *, rel_tol: float = 1e-4, abs_tol: float = 0.011) -> bool:
    if isinstance(expected, bool) or isinstance(got, bool):
        return got is expected
    if isinstance(expected, int | float) and isinstance(got, int | float):
        return math.isclose(float(got), float(expected), rel_tol=rel_tol, abs_tol=abs_tol)
    if isinstance(expected, str) and isinstance(got, str):
        return _norm(got) == _norm(expected)
    if isinstance(expected, list) and isinstance(got, list):
        return len(got) == len(expected) and all(values_match(g, e) for g, e in zip(got, expected, strict=True))
    return got == expected


def extract_answer(text: str) -> str:
    """The text after the last `Answer:` marker, else the whole text; trailing period dropped."""
    matches = list(_ANSWER.finditer(text[-20_000:]))
    tail = text[-20_000:][matches[-1].end():] if matches else text[-20_000:]
    tail = tail.strip().splitlines()[0] if tail.strip() else ""
    return tail.strip().rstrip(".").strip().strip("*`\"'").strip()


def text_matches(text: str, expected: Any) -> bool:
    """A final text answer vs the expected value: the first number for numeric answers, else the whole answer."""
    answer = extract_answer(text)
    if not answer:
        return False
    if isinstance(expected, int | float) and not isinstance(expected, bool):
        match = _NUMBER.search(answer)
        if match is None:
            return False
        try:
            return values_match(float(match.group().replace(",", "")), expected)
        except ValueError:
            return False
    if isinstance(expected, str):
        return _norm(answer) == _norm(expected)
    return _norm(answer) == _norm(str(expected))


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())
