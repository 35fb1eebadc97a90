"""Differential test: our verifier against math-verify's own `parse`/`verify` on generated items.

Each item is a generated task plus one response written in a known way (the gold in another notation, a near miss,
an unsimplified form, the right value hidden in a reasoning block, two answers, prose without a box, ...). Every
item is scored by both verifiers. Two things must hold:
  1. our verdict is the one the response kind calls for (`expected_ours`), independently of math-verify;
  2. every disagreement with math-verify falls in a class explained in data/differential_cases.json.
The default run takes every 10th item (about 700, under 30 s); `RLVR_MATH_DIFFERENTIAL=full` runs all of them
(7,080). `python tests/math/test_math_differential.py` runs the full set and rewrites the figures in the JSON.
"""

from __future__ import annotations

import json
import os
import random
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import pytest

from rlvr_gym import Task
from rlvr_gym.envs.math.notation import read_number
from rlvr_gym.envs.math.tasks import KINDS, MathTasks
from rlvr_gym.envs.math.verifier import format_number, verify

CASES_FILE = Path(__file__).parent / "data" / "differential_cases.json"
TASKS_PER_CELL = 8  # tasks per (kind, difficulty, split); 6 kinds x 5 difficulties x 2 splits
SUBSAMPLE = 10


@dataclass(frozen=True)
class Item:
    task: Task
    kind: str  # how the response was written
    response: str
    expected_ours: bool


def _decimal(value: Fraction) -> str | None:
    """The terminating decimal of value, or None."""
    den = value.denominator
    for p in (2, 5):
        while den % p == 0:
            den //= p
    if den != 1:
        return None
    places = 0
    while (value * 10**places).denominator != 1:
        places += 1
    text = f"{abs(value.numerator) * 10**places // value.denominator:0{places + 1}d}"
    body = text if places == 0 else f"{text[:-places]}.{text[-places:]}"
    return ("-" if value < 0 else "") + body


def _repeating(value: Fraction) -> str | None:
    """`0.1\\overline{6}`-style spelling of a non-terminating rational (short periods only), else None."""
    if _decimal(value) is not None or value < 0:
        return None
    whole, rest = divmod(value.numerator, value.denominator)
    digits, seen = [], {}
    while rest and rest not in seen and len(digits) < 12:
        seen[rest] = len(digits)
        rest *= 10
        digits.append(str(rest // value.denominator))
        rest %= value.denominator
    if not rest or rest not in seen:
        return None
    start = seen[rest]
    return f"{whole}.{''.join(digits[:start])}\\overline{{{''.join(digits[start:])}}}"


def _scientific(n: int) -> str | None:
    if n == 0 or abs(n) < 10:
        return None
    digits = str(abs(n)).rstrip("0") or "0"
    exponent = len(str(abs(n))) - 1
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return ("-" if n < 0 else "") + f"{mantissa}e{exponent}"


def _notations(gold: str, value: Fraction | None, form: str | None) -> Iterator[tuple[str, str, bool]]:
    """(kind, boxed content, should pass) for correct answers written other ways."""
    yield "gold", gold, True
    yield "nested_box", f"\\boxed{{{gold}}}", True
    if value is None:  # radical golds
        reading = read_number(gold)
        coef, rad = reading.coef, reading.radicand
        if coef.denominator == 1 and coef > 0:
            yield "radical_unicode", f"{coef if coef != 1 else ''}√{rad}", True
            yield "radical_unsimplified", f"\\sqrt{{{coef * coef * rad}}}", form != "simplest_radical"
        return
    ok_any = form is None
    if value.denominator != 1:
        p, q = value.numerator, value.denominator
        yield "dfrac", f"{'-' if p < 0 else ''}\\dfrac{{{abs(p)}}}{{{q}}}", True
        yield "unsimplified_fraction", f"{2 * p}/{2 * q}", ok_any
        if _decimal(value):
            yield "decimal", _decimal(value), ok_any
        if _repeating(value):
            yield "repeating_decimal", _repeating(value), ok_any
        if abs(value) > 1:
            whole, rest = divmod(abs(p), q)
            yield "mixed_number", f"{'-' if p < 0 else ''}{whole} {rest}/{q}", form in (None, "lowest_terms")
    else:
        n = value.numerator
        yield "decimal_of_integer", f"{n}.0", ok_any
        if n < 0:
            yield "unicode_minus", f"−{-n}", True
        if abs(n) >= 1000:
            yield "thousands", f"{n:,}", True
        if _scientific(n):
            yield "scientific", _scientific(n), ok_any
        yield "percent_as_number", f"{n}\\%", n == 0 and form is None  # n% = n/100; no question asks for a percent


def _near_misses(gold: str, value: Fraction | None) -> Iterator[tuple[str, str]]:
    if value is None:
        reading = read_number(gold)
        yield "wrong_coefficient", f"{format_number(reading.coef + 1)}\\sqrt{{{reading.radicand}}}"
        return
    yield "wrong_plus_one", format_number(value + 1)
    if value:
        yield "wrong_times_ten", format_number(value * 10)
        yield "wrong_sign", format_number(-value)


def items_for(task: Task, rng: random.Random) -> list[Item]:
    gold = str(task.ground_truth)
    form = task.metadata.get("answer_form")
    value = Fraction(gold) if "sqrt" not in gold else None
    items = [
        Item(task, kind, f"We work it out.\nThe final answer is \\boxed{{{text}}}.", ok)
        for kind, text, ok in _notations(gold, value, form)
    ]
    misses = list(_near_misses(gold, value))
    items += [Item(task, kind, f"The final answer is \\boxed{{{text}}}.", False) for kind, text in misses]
    wrong = rng.choice(misses)[1]
    items += [
        Item(
            task,
            "think_block_trick",
            f"<think>It is \\boxed{{{gold}}}.</think>\nThe answer is \\boxed{{{wrong}}}.",
            False,
        ),
        Item(
            task, "code_fence_trick", f"```\nprint('\\boxed{{{gold}}}')\n```\nThe answer is \\boxed{{{wrong}}}.", False
        ),
        Item(task, "two_answers", f"Either \\boxed{{{wrong}}} or \\boxed{{{gold}}}.", False),
        Item(task, "prose_no_box", f"Working through it, the answer is {gold}.", False),
        Item(task, "reasoning_then_box", f"<think>Try {wrong}? No.</think>\nSo the answer is \\boxed{{{gold}}}.", True),
    ]
    return items


def generate_items() -> list[Item]:
    items = []
    for kind in sorted(KINDS):
        for difficulty in range(1, 6):
            for split in ("train", "eval"):
                source = MathTasks(families=[kind], difficulty=difficulty, split=split, seed=2024)
                for index in range(TASKS_PER_CELL):
                    task = source.task(index)
                    rng = random.Random(f"{task.id}|{kind}|{difficulty}")
                    items += items_for(task, rng)
    return items


def math_verify_passes(item: Item) -> bool:
    from math_verify import parse
    from math_verify import verify as mv_verify

    gold = parse(f"${item.task.ground_truth}$")
    return bool(mv_verify(gold, parse(item.response)))


def run(items: list[Item]) -> dict:
    keys: Counter[str] = Counter()
    ours_wrong: list[str] = []
    examples: dict[str, str] = {}
    for item in items:
        ours = verify(item.task, [item.response]).passed
        if ours != item.expected_ours:
            ours_wrong.append(f"{item.kind}: {item.response!r} for gold {item.task.ground_truth!r}")
        theirs = math_verify_passes(item)
        if ours != theirs:
            key = f"{item.kind}|ours={ours}|math_verify={theirs}"
            keys[key] += 1
            examples.setdefault(
                key,
                f"gold {item.task.ground_truth!r}, form {item.task.metadata.get('answer_form')}, "
                f"response {item.response!r}",
            )
    agree = len(items) - sum(keys.values())
    return {
        "items": len(items),
        "agree": agree,
        "agreement_rate": round(agree / len(items), 4),
        "disagreements": dict(sorted(keys.items())),
        "examples": examples,
        "ours_wrong": ours_wrong,
    }


def load_cases() -> dict:
    return json.loads(CASES_FILE.read_text(encoding="utf-8"))


def test_differential_against_math_verify() -> None:
    pytest.importorskip("math_verify")
    items = generate_items()
    assert len(items) >= 5000
    if os.environ.get("RLVR_MATH_DIFFERENTIAL") != "full":
        items = items[::SUBSAMPLE]
    result = run(items)
    assert not result["ours_wrong"], result["ours_wrong"][:5]
    explained = load_cases()["classes"]
    unexplained = {key: result["examples"][key] for key in result["disagreements"] if key not in explained}
    assert not unexplained, unexplained
    assert all(case["explanation"].strip() for case in explained.values())
    assert result["agreement_rate"] > 0.7


def main() -> None:
    """Run the full set and rewrite the figures (classes keep their hand-written explanations)."""
    result = run(generate_items())
    cases = load_cases() if CASES_FILE.exists() else {"classes": {}}
    for key, count in result["disagreements"].items():
        entry = cases["classes"].setdefault(key, {"explanation": ""})
        entry.update(count=count, example=result["examples"][key])
    for key in set(cases["classes"]) - set(result["disagreements"]):
        cases["classes"][key]["count"] = 0
    cases["figures"] = {k: result[k] for k in ("items", "agree", "agreement_rate")}
    cases["figures"]["ours_wrong"] = len(result["ours_wrong"])
    CASES_FILE.parent.mkdir(exist_ok=True)
    CASES_FILE.write_text(json.dumps(cases, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps(cases["figures"]), file=sys.stderr)
    missing = [key for key, case in cases["classes"].items() if not case["explanation"]]
    print("classes without an explanation:", missing, file=sys.stderr)
    print("ours_wrong:", result["ours_wrong"][:10], file=sys.stderr)


if __name__ == "__main__":
    main()
