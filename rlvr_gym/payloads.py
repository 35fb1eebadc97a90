"""Text that string methods, regexes and number parsers disagree about: check-env's Unicode and numeral fuzz.

An env must never raise on any string (issue #43: a GeoX answer of "²" passed `str.isdigit()`, then `int()` raised
out of `env.step`). Such payloads are only dangerous where a parser looks at them, so `payload_actions` puts each
one where the task's answer goes: in the prompt's first answer slot (`floor.answer_slots`; alone when the prompt
shows none), and the sharpest numerals in place of every ASCII digit run of the reference answer; plus the
reference with Latin letters swapped for look-alikes and with bidi controls around it. The fuzz check steps every
action and fails on any exception.
"""

from __future__ import annotations

import re
from typing import Any

from . import floor

NUMERALS = {  # each one is a digit or a number to some parser and not to another
    "superscript_digit": "²",
    "circled_digit": "③",
    "fullwidth_digit": "３",
    "arabic_indic_digit": "٣",
    "devanagari_digit": "३",
    "math_bold_digit": "𝟑",
    "kharosthi_digit": "𐩃",
    "roman_numeral": "Ⅻ",
    "nan": "nan",
    "NaN": "NaN",
    "inf": "inf",
    "negative_infinity": "-Infinity",
    "float_overflow": "1e999",
    "huge_integer": "9" * 5000,  # int() refuses more than 4300 digits
    "huge_power_of_ten": "1" + "0" * 100_000,
    "long_fraction": "0." + "3" * 5000,
    "underscored": "1_000",
    "hexadecimal": "0x1F",
    "signed_zero": "-0.0",
}
TEXT = {
    "bidi_override": "\u202e",
    "bidi_isolate": "\u2066x\u2069",
    "zero_width": "\u200b",
    "byte_order_mark": "\ufeff",
    "cyrillic_a": "а",
    "greek_capital_omicron": "Ο",
    "long_s": "ſ",
    "dotless_i": "ı",
}
IN_REFERENCE = ("superscript_digit", "circled_digit", "fullwidth_digit", "huge_integer", "NaN", "float_overflow")
CONFUSABLES = str.maketrans({"a": "а", "e": "е", "o": "о", "p": "р", "c": "с", "x": "х", "A": "А", "O": "О"})
_DIGITS = re.compile(r"[0-9]+")


def payload_actions(prompt: str, reference: Any) -> dict[str, str]:
    """name -> action for one task; `reference` is the first reference action (text) or None."""
    slots = floor.answer_slots(prompt)
    slot = slots[0] if slots else None
    ref = reference if isinstance(reference, str) else ""
    actions: dict[str, str] = {}
    for name, token in {**NUMERALS, **TEXT}.items():
        if slot is None:
            actions[f"alone:{name}"] = token
        else:
            actions[f"slot:{name}"] = slot.text[: slot.body[0]] + token + slot.text[slot.body[1] :]
    if ref:
        for name in IN_REFERENCE:
            actions[f"reference_digits:{name}"] = _DIGITS.sub(lambda _m, t=NUMERALS[name]: t, ref)
        actions["reference_confusables"] = ref.translate(CONFUSABLES)
        actions["reference_bidi"] = "\u202e" + ref + "\u2066"
    seen: set[str] = set()
    return {name: action for name, action in actions.items() if not (action in seen or seen.add(action))}
