"""Every accepted notation reads as its exact value; nothing maps two distinct numbers to one."""

from __future__ import annotations

from fractions import Fraction

import pytest

from rlvr_gym.envs.math.notation import read_number, same_value

F = Fraction

# (notation, span, exact value as coef or (coef, radicand))
ACCEPTED = [
    ("integer", "42", F(42)),
    ("negative", "-3", F(-3)),
    ("unicode minus U+2212", "−3", F(-3)),
    ("plus sign", "+3", F(3)),
    ("fullwidth digits", "４２", F(42)),
    ("arabic-indic digits", "٤٢", F(42)),
    ("decimal", "0.75", F(3, 4)),
    ("leading-dot decimal", ".5", F(1, 2)),
    ("thousands comma", "1,000", F(1000)),
    ("thousands comma with decimals", "12,345.5", F(24691, 2)),
    ("latex thousands {,}", "1{,}000", F(1000)),
    ("latex thin-space thousands", "1\\,000", F(1000)),
    ("slash fraction", "3/4", F(3, 4)),
    ("fraction slash U+2044", "3⁄4", F(3, 4)),
    ("frac", "\\frac{3}{4}", F(3, 4)),
    ("dfrac", "\\dfrac{3}{4}", F(3, 4)),
    ("tfrac short", "\\tfrac34", F(3, 4)),
    ("frac negative numerator", "\\frac{-3}{4}", F(-3, 4)),
    ("negative frac", "-\\frac34", F(-3, 4)),
    ("mixed number", "1 1/2", F(3, 2)),
    ("negative mixed number", "-2 3/4", F(-11, 4)),
    ("latex mixed number", "1\\frac{1}{2}", F(3, 2)),
    ("unicode mixed number", "1½", F(3, 2)),
    ("vulgar fraction", "½", F(1, 2)),
    ("vulgar three quarters", "¾", F(3, 4)),
    ("scientific e", "1.2e3", F(1200)),
    ("scientific E negative", "1.2E-3", F(12, 10000)),
    ("scientific times", "1.2 \\times 10^{3}", F(1200)),
    ("scientific cdot", "1.2\\cdot10^3", F(1200)),
    ("scientific unicode times", "1.2×10^3", F(1200)),
    ("power of ten", "10^{3}", F(1000)),
    ("repeating overline", "0.\\overline{3}", F(1, 3)),
    ("repeating with fixed part", "0.1\\overline{6}", F(1, 6)),
    ("repeating bar", "0.\\bar{3}", F(1, 3)),
    ("repeating two digits", "0.\\overline{27}", F(3, 11)),
    ("nested boxes", "\\boxed{\\boxed{3}}", F(3)),
    ("dollar math", "$\\frac{1}{2}$", F(1, 2)),
    ("inline math", "\\(7\\)", F(7)),
    ("text wrapper", "\\text{7}", F(7)),
    ("bold markdown", "**7**", F(7)),
    ("parentheses", "(-3)", F(-3)),
    ("left right", "\\left(\\frac{1}{2}\\right)", F(1, 2)),
    ("assignment", "x = 4", F(4)),
    ("final period", "17.", F(17)),
    ("currency", "\\$18", F(18)),
    ("unit words", "18 dollars", F(18)),
    ("text unit", "12\\text{ cm}", F(12)),
    ("degrees", "90^\\circ", F(90)),
    ("degree sign", "90°", F(90)),
    ("sqrt", "\\sqrt{2}", (F(1), 2)),
    ("coefficient sqrt", "3\\sqrt{2}", (F(3), 2)),
    ("unicode root", "√2", (F(1), 2)),
    ("frac with sqrt", "\\frac{3\\sqrt{2}}{2}", (F(3, 2), 2)),
    ("sqrt over int", "\\sqrt{2}/2", (F(1, 2), 2)),
    ("one over sqrt", "\\frac{1}{\\sqrt{2}}", (F(1, 2), 2)),
    ("unsimplified sqrt", "\\sqrt{8}", (F(2), 2)),
]


@pytest.mark.parametrize(("name", "span", "value"), ACCEPTED, ids=[case[0] for case in ACCEPTED])
def test_accepted_notation(name: str, span: str, value: Fraction | tuple[Fraction, int]) -> None:
    reading = read_number(span)
    assert reading is not None, span
    coef, radicand = value if isinstance(value, tuple) else (value, 1)
    expected = read_number(f"{coef.numerator}/{coef.denominator}") if radicand == 1 else None
    if expected is not None:
        assert same_value(reading, expected), (span, reading)
    else:
        assert reading.key == ((coef > 0) - (coef < 0), coef * coef * radicand), (span, reading)


def test_percent_means_hundredths() -> None:
    for span in ("25%", "25\\%", "25 percent"):
        reading = read_number(span)
        assert reading is not None and reading.percent and reading.value().coef == F(1, 4)


NOT_NUMBERS = [
    ("superscript is not a digit", "2²"),
    ("subscript is not a digit", "2₂"),
    ("digits split by a space", "12 3"),
    ("space-grouped thousands", "1 000"),
    ("short thousands group", "1,00"),
    ("a pair", "1,2"),
    ("scale word", "3 million"),
    ("hedge", "3 or four"),
    ("improper mixed number", "1 3/2"),
    ("zero denominator", "\\frac{1}{0}"),
    ("double sign", "--3"),
    ("expression", "3/4 + 1/8"),
    ("variable", "x"),
    ("huge exponent", "1e999"),
    ("empty", ""),
    ("too long", "1" * 500),
]


@pytest.mark.parametrize(("name", "span"), NOT_NUMBERS, ids=[case[0] for case in NOT_NUMBERS])
def test_not_a_number(name: str, span: str) -> None:
    assert read_number(span) is None, span


def test_distinct_numbers_stay_distinct() -> None:
    pairs = [
        ("22", "2²"),
        ("123", "12 3"),
        ("0.33", "1/3"),
        ("0.3333", "0.\\overline{3}"),
        ("1.2e3", "120"),
        ("-2", "2"),
        ("\\sqrt{8}", "\\sqrt{2}"),
        ("1,234", "1.234"),
    ]
    for a, b in pairs:
        x, y = read_number(a), read_number(b)
        assert x is None or y is None or not same_value(x, y), (a, b)


def test_forms_are_recorded() -> None:
    assert read_number("6/8").reduced is False and read_number("3/4").reduced is True
    assert read_number("\\frac{3}{-4}").reduced is False
    assert read_number("\\sqrt{8}").reduced is False and read_number("2\\sqrt{2}").reduced is True
    assert read_number("\\frac{1}{\\sqrt{2}}").reduced is False
    assert read_number("0.5").notation == "decimal" and read_number("1 1/2").notation == "mixed"
    assert read_number("18 dollars").unit == "$" and read_number("5\\text{ cm}").unit == "cm"
    for span in ("5 cm^2", "5 cm²", "5\\text{ cm}^{2}", "5 square centimeters"):
        assert read_number(span).unit == "cm^2", span
