"""The final text answer: one documented extraction rule and an exact comparison.

Extraction: the answer is what follows `Answer:` on a line of its own (markdown emphasis allowed), outside `<think>`
sections and code fences; every such line must state the same value, otherwise the response is ambiguous (invalid,
never a pass). Answers longer than `MAX_ANSWER_CHARS` are not answers.

Comparison with the value the executed chain produced:
- integers (and integral floats) must be stated exactly: `1311`, `1,311` (thousands groups of three), `1311.0`,
  `1.311e3`; never within a tolerance, so off-by-one fails however large the number;
- other reals must round to the executed value at the precision the tool reported (|got - want| < half a unit in
  its last decimal, plus a few ulps of float noise): `92.35` matches `92.35` and `92.350`, not `92.3` or `92.36`;
- a numeric answer line must hold exactly one number (a unit word may follow); two numbers are ambiguous;
- strings compare case-insensitively with whitespace collapsed and surrounding quotes/emphasis/period removed.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from typing import Any

MAX_ANSWER_CHARS = 200
MAX_MARKERS = 1000  # occurrences of the word "answer" looked at
_PREFIX, _PREFIX_CHARS = 8, " \t>*_#-"  # what may precede the marker on its line (indent, quote, emphasis, bullet)
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d{1,4})?(?![\w.,]*\d)")
_DIGIT = re.compile(r"\d")


class Ambiguous(ValueError):
    """The response commits to more than one answer, or to none."""


def extract_answer(content: str) -> str:
    """The one committed answer in `content` (think sections already removed); `Ambiguous` if none or several."""
    answers, fences, last = [], 0, 0
    for at, line in _answer_lines(content):
        fences, last = fences + content.count("```", last, at), at  # an odd count: inside a code fence
        if fences % 2 == 0:
            answers.append(line.strip().strip("*_`\"' ").rstrip(".").strip())
    distinct = {" ".join(a.casefold().split()) for a in answers}
    if not answers or distinct == {""}:
        raise Ambiguous("no 'Answer: <value>' line")
    if len(distinct) > 1:
        raise Ambiguous(f"{len(distinct)} different answers stated")
    return answers[-1]


def _answer_lines(text: str) -> list[tuple[int, str]]:
    """What follows each `Answer:` marker that starts a line. Only occurrences of the word are visited (C-level
    `find`), each looked at in a window of a few characters, so any text costs linear time."""
    lower, lines, pos = text.lower(), [], 0
    for _ in range(MAX_MARKERS):
        at = lower.find("answer", pos)
        if at == -1:
            return lines
        pos = at + 6
        before = lower[max(0, at - _PREFIX - 1) : at]
        newline = before.rfind("\n")
        if newline == -1 and at > _PREFIX or before[newline + 1 :].strip(_PREFIX_CHARS):
            continue
        after = lower[pos : pos + 8].lstrip(" \t*_")
        if not after.startswith((":", "=")):
            continue
        colon = lower.find(after[0], pos)
        line_end = text.find("\n", colon, colon + MAX_ANSWER_CHARS + 2)
        if line_end == -1 and len(text) - colon > MAX_ANSWER_CHARS + 1:
            raise Ambiguous(f"an answer line is longer than {MAX_ANSWER_CHARS} characters")
        lines.append((at, text[colon + 1 : line_end if line_end != -1 else len(text)]))
        if len(lines) > 16:
            raise Ambiguous("more than 16 answer lines")
    raise Ambiguous(f"the word 'answer' appears more than {MAX_MARKERS} times")


def parse_number(answer: str) -> Decimal:
    """The single number in an answer line; `Ambiguous` when there is none or more than one."""
    numbers = _NUMBER.findall(answer)
    if len(numbers) != 1 or len(_DIGIT.findall(answer)) != len(_DIGIT.findall(numbers[0])):
        raise Ambiguous(f"expected exactly one number in the answer, got {answer[:60]!r}")
    try:
        return Decimal(numbers[0].replace(",", ""))
    except InvalidOperation as exc:  # pragma: no cover - the regex only matches decimal literals
        raise Ambiguous(f"not a number: {numbers[0]!r}") from exc


def answer_matches(answer: str, expected: Any) -> bool:
    """Whether a final answer states the executed value `expected` (rules in the module docstring)."""
    if isinstance(expected, bool) or expected is None:
        return _norm(answer) == _norm(str(expected))
    if isinstance(expected, int | float):
        got = parse_number(answer)
        if not math.isfinite(expected):
            return False
        if float(expected).is_integer():
            return got == Decimal(int(expected))
        want = Decimal(repr(float(expected)))
        half_unit = Decimal(1).scaleb(want.as_tuple().exponent) / 2
        return abs(got - want) < half_unit + Decimal(4 * math.ulp(float(expected)))
    return _norm(answer) == _norm(str(expected))


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())
