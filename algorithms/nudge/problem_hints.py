"""Per-problem strategy hints for sums ("What is a + b?": MathAddition-v0, difficulty-1 arithmetic).

NudgeRL's contexts are hints about *this* problem's technique, not its topic. For a sum the technique is place
value, and the nudge is the problem's own partial sums ("20 + 10 = 30 and 4 + 8 = 12, carry..."), which leave the
last step (and the carry) to the policy. Distractors (a difference, a product) are mixed in so that contexts differ
in worth and the inter-context advantage has something to tell apart. The order is fixed: technique, distractor,
technique, distractor, so M = 2 contexts give every problem one of each.

A hint never shows the answer: a nudge whose numbers would include it falls back to its wording without numbers
(`safe_hints` then also drops any hint holding the answer as a token).
"""

from __future__ import annotations

import re
from collections.abc import Callable

_SUM = re.compile(r"What is (\d{1,6}) \+ (\d{1,6})\?")


def shows(text: str, number: int) -> bool:
    """True when `number` appears in `text` as a whole number (not as part of a longer one)."""
    return re.search(rf"(?<!\d){number}(?!\d)", text) is not None


def _or_plain(text: str, plain: str, answer: int) -> str:
    return plain if shows(text, answer) else text


def place_value(a: int, b: int) -> str:
    ta, tb, oa, ob = a - a % 10, b - b % 10, a % 10, b % 10
    text = (
        f"Add the tens, then the ones: {ta} + {tb} = {ta + tb} and {oa} + {ob} = {oa + ob}; if the ones make more "
        "than nine, carry the extra ten into the tens."
    )
    plain = "Add the tens, then the ones, and carry a ten if the ones make more than nine."
    return _or_plain(text, plain, a + b)


def round_and_correct(a: int, b: int) -> str:
    x, y = (a, b) if a % 10 >= b % 10 else (b, a)  # round the addend nearer to the next ten
    plain = "Round one number up to a whole ten, add, then take away what the rounding added."
    if x % 10 == 0:
        return plain
    up = x - x % 10 + 10
    return _or_plain(f"Round {x} up to {up}, add {y}, then take away the {up - x} you added.", plain, a + b)


def difference(a: int, b: int) -> str:
    """Distractor: the difference of the addends, worked out."""
    hi, lo = max(a, b), min(a, b)
    return _or_plain(f"Subtract the smaller number: {hi} - {lo} = {hi - lo}.", "Subtract the smaller number.", a + b)


def product(a: int, b: int) -> str:
    """Distractor: multiply instead of add."""
    return _or_plain(f"Multiply {a} by {b}.", "Multiply the two numbers.", a + b)


SUM_HINTS: list[Callable[[int, int], str]] = [place_value, difference, round_and_correct, product]


def addition_hints(question: str) -> list[str]:
    """Hints for a question of the form "What is a + b?"; none for any other question."""
    m = _SUM.fullmatch(question.strip())
    if m is None:
        return []
    a, b = int(m[1]), int(m[2])
    return [hint(a, b) for hint in SUM_HINTS]


PROBLEM_HINTS: dict[str, Callable[[str], list[str]]] = {"addition": addition_hints, "arithmetic": addition_hints}
