"""Read one committed answer span as an exact number, and remember how it was written.

Accepted notations of a real value (each has a test in tests/math/test_math_notation.py):

- integers and decimals, with a sign `-`, `+` or U+2212 `−`: `42`, `-3`, `−3`, `+3`, `0.75`, `.5`;
  any Unicode decimal digit (fullwidth `４２`, Arabic-Indic) reads as its digit;
- thousands separators only where unambiguous: groups of exactly three after `,`, `{,}` or LaTeX `\\,`
  (`1,000`, `12,345.5`, `1{,}000`, `1\\,000`); `1,00` and `1,2` are not numbers;
- fractions `3/4`, `3⁄4`, `\\frac{3}{4}`, `\\dfrac{3}{4}`, `\\tfrac34`, `\\frac{-3}{4}`, `-\\frac34`;
- mixed numbers when unambiguous (a proper fraction after a whole number): `1 1/2`, `1\\frac{1}{2}`, `1½`, `-2 3/4`;
- Unicode vulgar fractions `½ ⅓ ¼ ¾ ⅞ ...`;
- scientific notation `1.2e3`, `1.2E-3`, `1.2 \\times 10^{3}`, `1.2\\cdot10^3`, `1.2×10^3`, `10^{3}` (|exponent| <= 400);
- repeating decimals `0.\\overline{3}`, `0.1\\overline{6}`, `0.\\bar{3}`;
- percentages `25%`, `25\\%`, `25 percent` (25% means 25/100; see `Reading.percent`);
- square roots `\\sqrt{2}`, `3\\sqrt{2}`, `√2`, `\\frac{3\\sqrt{2}}{2}`, `\\sqrt{2}/2`, `\\frac{1}{\\sqrt{2}}` (exact);
- wrappers that do not change the value: nested `\\boxed{\\boxed{3}}`, `$...$`, `\\(...\\)`, `\\text{}`, `\\mathbf{}`,
  `**3**`, outer braces/parentheses, `\\left( \\right)`, `x = 3`, `\\displaystyle`, a final period;
- units and currency, kept apart from the number: `18 dollars`, `\\$18`, `12\\text{ cm}`, `90^\\circ`, `90°`.

Never normalised into a number (so distinct numbers never become equal): super/subscript digits (`2²` is not `22`),
digits split by plain spaces (`12 3` is not `123`, `1 000` is not read at all), scale words (`3 million` is not 3),
improper "mixed" numbers (`1 3/2`), hedges (`3 or 4`). All work is bounded: spans over `MAX_SPAN` chars are refused.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction

MAX_SPAN = 200
MAX_EXPONENT = 400
MAX_DIGITS = 400

VULGAR = {
    "½": Fraction(1, 2),
    "⅓": Fraction(1, 3),
    "⅔": Fraction(2, 3),
    "¼": Fraction(1, 4),
    "¾": Fraction(3, 4),
    "⅕": Fraction(1, 5),
    "⅖": Fraction(2, 5),
    "⅗": Fraction(3, 5),
    "⅘": Fraction(4, 5),
    "⅙": Fraction(1, 6),
    "⅚": Fraction(5, 6),
    "⅐": Fraction(1, 7),
    "⅛": Fraction(1, 8),
    "⅜": Fraction(3, 8),
    "⅝": Fraction(5, 8),
    "⅞": Fraction(7, 8),
    "⅑": Fraction(1, 9),
    "⅒": Fraction(1, 10),
    "↉": Fraction(0, 3),
}
SCALE_WORDS = {
    "hundred",
    "thousand",
    "million",
    "billion",
    "trillion",
    "dozen",
    "hundreds",
    "thousands",
    "millions",
    "billions",
    "half",
    "halves",
    "third",
    "thirds",
    "quarter",
    "quarters",
    "tenths",
    "hundredths",
}
HEDGE_WORDS = {
    "or",
    "and",
    "to",
    "plus",
    "minus",
    "times",
    "over",
    "divided",
    "not",
    "maybe",
    "either",
    "approx",
    "approximately",
    "about",
    "roughly",
    "nearly",
    "around",
    "than",
    "more",
    "less",
    "between",
    "with",
    "x",
    "sqrt",
    "pi",
    "e",
    "i",
}
UNIT_ALIASES = {
    "dollar": "$",
    "dollars": "$",
    "usd": "$",
    "$": "$",
    "cm": "cm",
    "centimeter": "cm",
    "centimeters": "cm",
    "centimetre": "cm",
    "centimetres": "cm",
    "m": "m",
    "meter": "m",
    "meters": "m",
    "metre": "m",
    "metres": "m",
    "mm": "mm",
    "millimeter": "mm",
    "millimeters": "mm",
    "km": "km",
    "kilometer": "km",
    "kilometers": "km",
    "g": "g",
    "gram": "g",
    "grams": "g",
    "kg": "kg",
    "kilogram": "kg",
    "kilograms": "kg",
    "s": "s",
    "sec": "s",
    "second": "s",
    "seconds": "s",
    "min": "min",
    "minute": "min",
    "minutes": "min",
    "h": "h",
    "hr": "h",
    "hour": "h",
    "hours": "h",
    "degree": "°",
    "degrees": "°",
    "°": "°",
    "ml": "ml",
    "milliliter": "ml",
    "milliliters": "ml",
    "l": "l",
    "liter": "l",
    "liters": "l",
    "litre": "l",
    "litres": "l",
}


@dataclass(frozen=True)
class Reading:
    """An exact value `coef * sqrt(radicand)` and the facts about its spelling that task constraints look at.

    `notation` is one of integer, decimal, fraction, mixed, scientific, repeating, radical. `reduced` says a
    fraction/mixed number/radical is in lowest terms with a positive denominator and a square-free radicand
    (always True for integers). `percent` marks `25%`; `unit` is the canonical unit written next to the number.
    """

    coef: Fraction
    radicand: int = 1
    notation: str = "integer"
    reduced: bool = True
    percent: bool = False
    unit: str | None = None

    @property
    def key(self) -> tuple[int, Fraction]:
        """Equal keys <=> equal real values (sign and the exact square)."""
        sign = (self.coef > 0) - (self.coef < 0)
        return sign, self.coef * self.coef * self.radicand

    def scaled(self, factor: Fraction) -> Reading:
        return replace(self, coef=self.coef * factor)

    def value(self) -> Reading:
        """The number a percentage stands for (25% -> 1/4); other readings unchanged."""
        return replace(self.scaled(Fraction(1, 100)), percent=False) if self.percent else self


def same_value(a: Reading, b: Reading) -> bool:
    return a.key == b.key


def rational(value: Fraction) -> Reading:
    return Reading(value, 1, "integer" if value.denominator == 1 else "fraction", True)


# ---- text clean-up ---------------------------------------------------------------------------------------------
def ascii_digits(text: str) -> str:
    """Every Unicode decimal digit (category Nd) as its ASCII digit; super/subscripts (category No) stay as they are."""
    if text.isascii():
        return text
    out = []
    for char in text:
        if char.isdecimal() and not char.isascii():
            out.append(str(unicodedata.decimal(char)))
        else:
            out.append(char)
    return "".join(out)


def _balanced_close(text: str, start: int) -> int:
    """Index of the brace closing text[start] == '{', or -1."""
    depth = 0
    for pos in range(start, len(text)):
        if text[pos] == "{":
            depth += 1
        elif text[pos] == "}":
            depth -= 1
            if depth == 0:
                return pos
    return -1


_WRAPPERS = ("\\boxed", "\\fbox", "\\text", "\\textbf", "\\mathbf", "\\mathrm", "\\mbox", "\\textrm", "\\mathit")
_DELIMS = (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]"), ("**", "**"), ("(", ")"), ("{", "}"))
_ASSIGN = re.compile(r"^[A-Za-z](?:_\{?\w{1,3}\}?)?\s*=\s*(?=[^=])")
_SPACING = re.compile(r"\\(?:left|right|big|Big|bigg|Bigg|displaystyle|textstyle|!|;|:|quad|qquad)(?![A-Za-z])|~")


def _strip_wrapper(text: str) -> str | None:
    """`text` without one outer wrapper that leaves the value unchanged, or None when there is none."""
    for command in _WRAPPERS:
        if text.startswith(command):
            rest = text[len(command) :].lstrip()
            if rest.startswith("{") and _balanced_close(rest, 0) == len(rest) - 1:
                return rest[1:-1]
    for left, right in _DELIMS:
        if len(text) > len(left) + len(right) and text.startswith(left) and text.endswith(right):
            inner = text[len(left) : -len(right)]
            if left == "{" and _balanced_close(text, 0) != len(text) - 1:
                continue
            if left == "(" and (inner.count("(") != inner.count(")") or "," in inner):
                continue
            if left == "$" and "$" in inner:
                continue
            return inner
    if text.endswith(".") and not text.endswith(".."):
        return text[:-1]
    assigned = _ASSIGN.sub("", text, count=1)
    return assigned if assigned != text else None


def unwrap(span: str) -> str:
    """The span with value-preserving wrappers removed (bounded: at most 12 layers)."""
    text = _SPACING.sub("", ascii_digits(span)).replace("−", "-").strip()
    text = text.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    for _ in range(12):
        inner = _strip_wrapper(text)
        if inner is None:
            break
        text = inner.strip()
    return text


# ---- units, percent, currency ------------------------------------------------------------------------------------
_POWER = r"(?:\^\s*\{?\s*[23]\s*\}?|[²³])?"
_TEXT_UNIT = re.compile(rf"\\(?:text|mathrm|mbox|textrm)\{{\s*([A-Za-z][A-Za-z ]{{0,30}}?)\s*\}}\s*({_POWER})$")
_WORD_UNIT = re.compile(rf"(?<=[\d}}.])\s*([A-Za-z]{{1,15}}(?: [A-Za-z]{{1,15}}){{0,2}})\s*({_POWER})$")
_DEGREES = re.compile(r"(?:\^\s*\{?\\circ\}?|°)$")
_PERCENT = re.compile(r"(?:\\%|%|\s*percent|\s*per cent)$")
_CURRENCY = re.compile(r"^(?:\\\$|\$|USD\s*)")


def split_unit(text: str) -> tuple[str, str | None, bool]:
    """(number text, canonical unit or None, percent?). A trailing word that is a scale or hedge word is kept in the
    number text, which then fails to parse: `3 million` and `3 or four` are not the number 3."""
    unit: str | None = None
    percent = False
    if _CURRENCY.match(text):
        text, unit = _CURRENCY.sub("", text, count=1).strip(), "$"
    found = _PERCENT.search(text)
    if found:
        return text[: found.start()].strip(), unit, True
    found = _DEGREES.search(text)
    if found:
        return text[: found.start()].strip(), "°", percent
    found = _TEXT_UNIT.search(text) or _WORD_UNIT.search(text)
    if found:
        words = found.group(1).lower().split()
        if words and not any(w in SCALE_WORDS or w in HEDGE_WORDS for w in words):
            power = {"2": "^2", "²": "^2", "3": "^3", "³": "^3"}.get(re.sub(r"[^\d²³]", "", found.group(2)), "")
            return text[: found.start()].strip(), canonical_unit(" ".join(words) + power), percent
    return text, unit, percent


# ---- number grammar ----------------------------------------------------------------------------------------------
_INT = r"(?:\d{1,3}(?:(?:,|\{,\}|\\,)\d{3})+|\d+)"
_DEC = rf"(?:{_INT}?\.\d+|{_INT})"
_EXP = r"[+-]?\d{1,3}"


def _int(text: str) -> int:
    return int(re.sub(r"[^\d]", "", text))


def _dec(text: str) -> Fraction:
    return Fraction(re.sub(r"\{,\}|\\,|,", "", text))


def _fraction(num: int, den: int, notation: str = "fraction") -> Reading | None:
    if den == 0:
        return None
    return Reading(Fraction(num, den), 1, notation, math.gcd(num, den) == 1 and den > 1)


def _radical(coef: Fraction, radicand: int, reduced_coef: bool = True, rad_in_den: bool = False) -> Reading | None:
    if radicand < 0 or radicand > 10**12:
        return None
    square_free = radicand > 1 and _square_free(radicand)
    return Reading(coef, radicand, "radical", reduced_coef and square_free and not rad_in_den)


def _square_free(n: int) -> bool:
    if n > 10**8:
        return False  # too large to check cheaply: not accepted as simplest form
    k = 2
    while k * k <= n:
        if n % (k * k) == 0:
            return False
        k += 1
    return True


def _exp10(mantissa: Fraction, exponent: str) -> Reading | None:
    power = int(exponent)
    if abs(power) > MAX_EXPONENT:
        return None
    return Reading(mantissa * Fraction(10) ** power, 1, "scientific", False)


def _repeating(whole: str, fixed: str, period: str) -> Reading:
    base = Fraction(int(whole or "0")) + (Fraction(int(fixed), 10 ** len(fixed)) if fixed else 0)
    tail = Fraction(int(period), (10 ** len(period) - 1) * 10 ** len(fixed))
    return Reading(base + tail, 1, "repeating", False)


def _mixed(whole: int, num: int, den: int) -> Reading | None:
    if den == 0 or not 0 < num < den:
        return None  # `1 3/2` or `1 0/2` is not an unambiguous mixed number
    return Reading(whole + Fraction(num, den), 1, "mixed", math.gcd(num, den) == 1)


_SQRT = r"(?:\\sqrt\s*\{(?P<r1>\d+)\}|\\sqrt\s*(?P<r2>\d)|√\s*\{?(?P<r3>\d+)\}?)"
_COEF = r"(?P<c>\d+)?\s*(?:\\cdot|\*|×)?\s*"


def _rad(m: re.Match[str]) -> int:
    return int(m.group("r1") or m.group("r2") or m.group("r3"))


def _coef(m: re.Match[str]) -> int:
    return int(m.group("c")) if m.group("c") else 1


Builder = Callable[[re.Match[str]], Reading | None]
_GRAMMAR: list[tuple[re.Pattern[str], Builder]] = [
    (re.compile(rf"{_INT}"), lambda m: Reading(Fraction(_int(m.group(0))))),
    (re.compile(rf"{_INT}?\.\d+"), lambda m: Reading(_dec(m.group(0)), 1, "decimal", False)),
    (re.compile(rf"({_DEC})[eE]({_EXP})"), lambda m: _exp10(_dec(m.group(1)), m.group(2))),
    (
        re.compile(rf"({_DEC})\s*(?:\\times|\\cdot|×|·|\*)\s*10\s*\^\s*(?:\{{\s*({_EXP})\s*\}}|(\d))"),
        lambda m: _exp10(_dec(m.group(1)), m.group(2) or m.group(3)),
    ),
    (re.compile(rf"10\s*\^\s*(?:\{{\s*({_EXP})\s*\}}|(\d))"), lambda m: _exp10(Fraction(1), m.group(1) or m.group(2))),
    (
        re.compile(r"(\d*)\.(\d*)\\(?:overline|bar)\s*(?:\{(\d{1,30})\}|(\d))"),
        lambda m: _repeating(m.group(1), m.group(2), m.group(3) or m.group(4)),
    ),
    (re.compile(r"(\d+)\s*[/⁄∕]\s*(\d+)"), lambda m: _fraction(int(m.group(1)), int(m.group(2)))),
    (
        re.compile(r"\\frac\s*(?:\{\s*(-?\d+)\s*\}|(\d))\s*(?:\{\s*(-?\d+)\s*\}|(\d))"),
        lambda m: _fraction(int(m.group(1) or m.group(2)), int(m.group(3) or m.group(4))),
    ),
    (re.compile(r"(\d+)\s+(\d+)\s*[/⁄∕]\s*(\d+)"), lambda m: _mixed(int(m.group(1)), int(m.group(2)), int(m.group(3)))),
    (
        re.compile(r"(\d+)\s*\\frac\s*(?:\{\s*(\d+)\s*\}|(\d))\s*(?:\{\s*(\d+)\s*\}|(\d))"),
        lambda m: _mixed(int(m.group(1)), int(m.group(2) or m.group(3)), int(m.group(4) or m.group(5))),
    ),
    (
        re.compile(rf"(\d*)\s*([{''.join(VULGAR)}])"),
        lambda m: (
            _mixed(int(m.group(1)), VULGAR[m.group(2)].numerator, VULGAR[m.group(2)].denominator)
            if m.group(1)
            else Reading(VULGAR[m.group(2)], 1, "fraction", True)
        ),
    ),
    (re.compile(rf"{_COEF}{_SQRT}"), lambda m: _radical(Fraction(_coef(m)), _rad(m))),
    (
        re.compile(rf"\\frac\s*\{{\s*{_COEF}{_SQRT}\s*\}}\s*\{{\s*(?P<d>\d+)\s*\}}"),
        lambda m: (
            _radical(Fraction(_coef(m), int(m.group("d"))), _rad(m), math.gcd(_coef(m), int(m.group("d"))) == 1)
            if int(m.group("d"))
            else None
        ),
    ),
    (
        re.compile(rf"{_COEF}{_SQRT}\s*/\s*(?P<d>\d+)"),
        lambda m: (
            _radical(Fraction(_coef(m), int(m.group("d"))), _rad(m), math.gcd(_coef(m), int(m.group("d"))) == 1)
            if int(m.group("d"))
            else None
        ),
    ),
    (
        re.compile(rf"\\frac\s*\{{\s*(?P<n>\d+)\s*\}}\s*\{{\s*{_COEF}{_SQRT}\s*\}}"),
        lambda m: _radical(Fraction(int(m.group("n")), _coef(m) * _rad(m)), _rad(m), True, True) if _rad(m) else None,
    ),
]


def _body(text: str) -> Reading | None:
    for pattern, build in _GRAMMAR:
        match = pattern.fullmatch(text)
        if match:
            return build(match)
    return None


def read_number(span: str) -> Reading | None:
    """The exact reading of a committed answer span, or None when it is not a number in an accepted notation."""
    if not isinstance(span, str) or len(span) > MAX_SPAN:
        return None
    text = unwrap(span)
    if not text or len(text) > MAX_SPAN or sum(c.isdigit() for c in text) > MAX_DIGITS:
        return None
    text, unit, percent = split_unit(text)
    text = unwrap(text)
    negative = False
    if text[:1] in ("+", "-"):  # not `in "+-"`: the empty prefix of an empty text is in every string
        negative, text = text[0] == "-", unwrap(text[1:])
        if text[:1] in ("+", "-"):
            return None
    reading = _body(text)
    if reading is None:
        return None
    if negative:
        reading = reading.scaled(Fraction(-1))
    return replace(reading, percent=percent, unit=unit)


def canonical_unit(name: str | None) -> str | None:
    """`centimeters` -> `cm`, `square centimeters` / `cm²` / `cm^{2}` -> `cm^2`; unknown names stay as written."""
    if name is None:
        return None
    key = re.sub(r"\s+", " ", name.strip().lower()).replace("²", "^2").replace("³", "^3")
    key = re.sub(r"\^\s*\{?\s*([23])\s*\}?", r"^\1", key)
    for prefix, power in (("square ", "^2"), ("cubic ", "^3")):
        if key.startswith(prefix):
            return canonical_unit(key[len(prefix) :]) + power
    base, _, power = key.partition("^")
    base = UNIT_ALIASES.get(base, UNIT_ALIASES.get(base.split(" ")[0], base)) if base else base
    return f"{base}^{power}" if power else base
