"""Exact numbers from answer text without sympy: the verifier's fast path.

Most answers (every generated task, most of GSM8K) are plain integers, decimals or fractions. Reading them as
`fractions.Fraction` decides equivalence exactly in microseconds, so math-verify's sympy machinery only runs for
answers that really are symbolic (roots, pi, intervals, expressions).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from fractions import Fraction

# Wrappers and spacing commands that never change a number's value.
_NOISE = re.compile(
    r"\\(?:displaystyle|textstyle|left|right|big|Big|bigg|Bigg|!|,|;|:| )|\\quad|\\qquad|~|\*\*|\\\$|\$|\s+"
)
_UNIT_TEXT = re.compile(r"\\(?:text|mbox|mathrm|textbf|mathbf)\{([^{}]*)\}")
_ASSIGN = re.compile(r"^[A-Za-z](?:_\{?\w+\}?)?=(?=[^=])")
_THOUSANDS = re.compile(r"^[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_DECIMAL = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)$")
_SLASH = re.compile(r"^([+-]?)\(?([+-]?\d+)\)?/\(?([+-]?\d+)\)?$")
_FRAC = re.compile(r"^([+-]?)\\[dt]?frac(\{[+-]?\d+\}|\d)(\{[+-]?\d+\}|\d)$")
_UNIT_WORDS = re.compile(
    r"^\s*(?P<num>[+-]?\\?\$?[\d.,]+(?:/\d+)?)\s+(?!(?:and|or|to|plus|minus|times|over|divided|and/or)\b)"
    r"(?:[A-Za-z]{2,}\.?\s*)+$"
)
_MAX_CHARS = 200


@functools.lru_cache(maxsize=65536)
def fast_normalize(text: str) -> str:
    """Canonical spelling of a short answer: NFKC, no math delimiters, spacing commands or unit words."""
    text = unicodedata.normalize("NFKC", text).strip()
    unit = _UNIT_WORDS.match(text)
    if unit:  # "18 dollars", "12 cm"
        text = unit.group("num")
    for left, right in (("\\(", "\\)"), ("\\[", "\\]")):
        if text.startswith(left) and text.endswith(right):
            text = text[len(left) : -len(right)]
    text = text.replace("−", "-").replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    # a trailing unit word ("18 \text{ dollars}") is dropped; a text-wrapped number ("\text{18}") is kept
    text = _UNIT_TEXT.sub(lambda m: m.group(1) if _DECIMAL.match(m.group(1).strip()) else " ", text)
    text = _NOISE.sub("", text)
    text = text.rstrip(".")
    return _ASSIGN.sub("", text)


def _brace(token: str) -> int:
    return int(token[1:-1] if token.startswith("{") else token)


@functools.lru_cache(maxsize=65536)  # gold answers and common outputs repeat across episodes; Fractions are immutable
def parse_number(text: str) -> Fraction | None:
    """The exact value of a plain number answer (`-2`, `0.75`, `1,000`, `3/4`, `\\frac{3}{4}`, `\\dfrac12`), else None."""
    if len(text) > _MAX_CHARS:
        return None
    s = fast_normalize(text)
    if not s or len(s) > _MAX_CHARS:
        return None
    if _THOUSANDS.match(s):
        s = s.replace(",", "")
    if _DECIMAL.match(s):
        return Fraction(s)
    match = _SLASH.match(s)
    if match:
        sign, num, den = match.group(1), int(match.group(2)), int(match.group(3))
    else:
        match = _FRAC.match(s)
        if not match:
            return None
        sign, num, den = match.group(1), _brace(match.group(2)), _brace(match.group(3))
    if den == 0:
        return None
    value = Fraction(num, den)
    return -value if sign == "-" else value


def parse_percent(text: str) -> Fraction | None:
    """The number in front of a percent sign (`25\\%`, `12.5 %`), else None."""
    s = fast_normalize(text)
    for sign in ("\\%", "%"):
        if s.endswith(sign) and s[: -len(sign)]:
            return parse_number(s[: -len(sign)])
    return None


def decimal_places(text: str) -> int:
    """Digits after the decimal point of a plain decimal answer (0 for integers and fractions)."""
    s = fast_normalize(text)
    if "." not in s or not _DECIMAL.match(s.replace(",", "")):
        return 0
    return len(s.rsplit(".", 1)[1])


def numbers_match(pred: Fraction, gold: Fraction, pred_decimals: int, *, min_rounded_decimals: int = 6) -> bool:
    """Exact equality, or a decimal with at least `min_rounded_decimals` places that is the gold rounded.

    `0.333333` for 1/3 passes (math-verify's float rounding does the same); `0.33` does not: a near miss.
    """
    if pred == gold:
        return True
    if pred_decimals < min_rounded_decimals:
        return False
    return abs(pred - gold) * 10**pred_decimals <= Fraction(1, 2)


def format_number(value: Fraction) -> str:
    """The exact ground-truth spelling: `17`, `-2`, `3/4`, `-5/3`."""
    if value.denominator == 1:
        return str(value.numerator)
    return f"{value.numerator}/{value.denominator}"
