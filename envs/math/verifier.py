"""The math verifier: `verify(task, trajectory) -> Verdict` and the family's near misses, `wrong_answers`.

Rule (see `extract` for the details): the answer is the last `\\boxed{}` the final response commits to, outside
reasoning blocks, code and quoted examples; committed boxes that disagree make the response invalid.

Numeric golds (every generated task, most dataset rows) are compared exactly: the answer must be a number in one
of the notations listed in `notation` whose value equals the gold (`25%` is 1/4; it also matches a gold of 25
when the question asks for a percentage, as GSM8K's do). Expressions are not notations: `3/4 + 1/8` does not answer "what is 3/4 + 1/8".
Symbolic dataset golds (intervals, sets, expressions) go to math-verify (`symbolic`).

Components (a `Rubric`): `value` (the value is right, metric), `form` (the task's constraints hold: `integer`,
`lowest_terms`, `simplest_radical` from `task.metadata["answer_form"]`, and `task.metadata["unit"]`; metric),
`correct` = value and form (weight 1, decides `passed`), `format` (weight 0 unless the env sets `format_weight`). An
invalid response has `valid=False` and reward 0.

`format` pays only for a committed answer *of the task's kind*: a number in an accepted notation when the gold is a
number, an expression of the gold's own kind (interval, set, tuple, equation, expression) using no symbol the gold
lacks when it is symbolic. A template placeholder (`\\boxed{N}`, `\\boxed{x}`, `\\boxed{answer}`), prose or an empty
shape is not an answer, so copying the prompt's answer template earns nothing (a policy did exactly that when a
prompt said "in the form \\boxed{N}"). Format credit still pays a wrong number, which a constant answer can farm:
shipped configs keep `format_weight` at 0 (docs/math.md).
"""

from __future__ import annotations

import functools
import math
import random
import re
from collections.abc import Sequence
from fractions import Fraction

from rlvr_gym import Criterion, Rubric, Task, Verdict
from rlvr_gym.types import trusted

from .extract import committed_answers
from .notation import Reading, canonical_unit, read_number, same_value
from .symbolic import same_kind, symbolic_equal

COMPONENTS = ("format", "value", "form", "correct")
FORMS = {
    "integer": "as an integer",
    "lowest_terms": "as an integer or a fraction in lowest terms",
    "simplest_radical": "in simplest radical form",
}
MAX_ANSWER_CHARS = 300


@functools.lru_cache(maxsize=16)
def rubric(format_weight: float = 0.0, correct_weight: float = 1.0) -> Rubric:
    def part(name: str):
        return lambda **values: values[name]

    weights = {"format": format_weight, "value": 0.0, "form": 0.0, "correct": correct_weight}
    return Rubric([Criterion(name, part(name), weights[name]) for name in COMPONENTS], pass_on="correct")


@functools.lru_cache(maxsize=65536)
def _reading(span: str) -> Reading | None:
    return read_number(span)


def echoes(task: Task) -> list[str]:
    """Texts whose verbatim copy in a response commits to nothing: the prompt, each prompt message (a one-shot
    example's worked answer included) and the bare question."""
    messages = [m.text() for m in task.prompt_messages()]
    texts = ["\n".join(messages), *messages, str(task.metadata.get("question") or "")]
    return [t for t in texts if t.strip()]


def _spelling(span: str) -> str:
    return re.sub(r"\s+|\\[,;! ]|\\left|\\right|\$", "", span).replace("dfrac", "frac")


def _agree(a: str, b: str) -> bool:
    """Whether two committed boxes state the same answer (same exact value, else the same spelling)."""
    x, y = _reading(a), _reading(b)
    if x is not None and y is not None:
        return same_value(x.value(), y.value())
    return _spelling(a) == _spelling(b)


def value_matches(answer: Reading, gold: Reading, percent_question: bool = False) -> bool:
    """Exact value equality; `25%` also answers a gold of 25 when the question asks for a percentage."""
    if same_value(answer.value(), gold.value()):
        return True
    return percent_question and answer.percent and not gold.percent and same_value(answer, gold)  # the bare number


def form_holds(answer: Reading, form: str | None, unit: str | None) -> bool:
    """The task's written-form constraints (metadata `answer_form` and `unit`)."""
    if unit is not None and answer.unit is not None and canonical_unit(answer.unit) != canonical_unit(unit):
        return False
    if form is None:
        return True
    if answer.percent:
        return False
    if form == "integer":
        return answer.notation == "integer"
    if form == "lowest_terms":
        return answer.notation in ("integer", "fraction", "mixed") and answer.reduced
    if form == "simplest_radical":
        return answer.notation in ("integer", "fraction", "radical") and answer.reduced
    raise ValueError(f"unknown answer_form {form!r}")


def _judge(answer: str, task: Task) -> tuple[bool, bool, bool]:
    """(an answer of the task's kind, value right, form right) for one committed answer."""
    gold_text = str(task.ground_truth)
    gold = _reading(gold_text)
    if gold is not None:
        reading = _reading(answer)
        if reading is None:
            return False, False, False
        question = str(task.metadata.get("question") or task.prompt).lower()
        asks_percent = "percent" in question or "%" in question
        return (
            True,
            value_matches(reading, gold, asks_percent),
            form_holds(reading, task.metadata.get("answer_form"), task.metadata.get("unit")),
        )
    right = _spelling(answer) == _spelling(gold_text) or (
        len(answer) <= MAX_ANSWER_CHARS and symbolic_equal(answer, gold_text)
    )
    return right or (len(answer) <= MAX_ANSWER_CHARS and same_kind(answer, gold_text)), right, True


def verify(
    task: Task, trajectory: Sequence[str], *, format_weight: float = 0.0, correct_weight: float = 1.0
) -> Verdict:
    """Judge the final response of a trajectory against the task's gold answer (pure, deterministic).

    The common response (one plain `\\boxed{}` holding an integer, decimal or simple fraction, nothing the
    extraction rule treats specially) is decided by `fast_verdict`; everything else by `full_verify`. Both give the
    same verdict on every response (tests/math/test_math_fast_path.py)."""
    if trajectory and type(trajectory[-1]) is str:
        verdict = fast_verdict(task, trajectory[-1], format_weight, correct_weight)
        if verdict is not None:
            return verdict
    return full_verify(task, trajectory, format_weight=format_weight, correct_weight=correct_weight)


def full_verify(
    task: Task, trajectory: Sequence[str], *, format_weight: float = 0.0, correct_weight: float = 1.0
) -> Verdict:
    """The whole rule (`committed_answers`, `read_number`, the rubric) for any response; see `verify`."""
    scorer = rubric(format_weight, correct_weight)
    zero = dict.fromkeys(COMPONENTS, 0.0)
    if not trajectory:
        return Verdict.invalid("no response", components=zero)
    response = trajectory[-1] if isinstance(trajectory[-1], str) else str(trajectory[-1])
    committed = committed_answers(response, echoes=echoes(task), max_chars=MAX_ANSWER_CHARS)
    if committed.error:
        return Verdict.invalid(
            committed.error,
            components=zero,
            feedback=f"No usable final answer ({committed.error}). Put it in \\boxed{{}}.",
        )
    answers = committed.answers
    if any(not _agree(answers[-1], other) for other in answers[:-1]):
        return Verdict.invalid(
            "two different committed answers",
            components=zero,
            feedback="You committed to more than one different answer; give exactly one.",
        )
    final = answers[-1]
    kind, value, form = _judge(final, task)
    shown = final if len(final) <= 60 else final[:57] + "..."
    if value and form:
        message = "Correct."
    elif value:
        message = f"Give the answer {FORMS.get(task.metadata.get('answer_form'), 'in the asked unit')}."
    else:
        message = f"Your answer {shown} is not correct."
    components = {"format": float(kind), "value": float(value), "form": float(form), "correct": float(value and form)}
    return scorer.combine(components, feedback=message)


# ---- the fast path -----------------------------------------------------------------------------------------------
# A response this pattern matches has exactly one backslash (so one `\boxed{`, no `\fbox`, no LaTeX the number
# reader unwraps) and none of the characters the extraction rule acts on (`<` of reasoning tags, backticks of
# code, `>` of block quotes, double quotes): `committed_answers` would return exactly the box's content. The
# content is an ASCII integer, decimal with digits on both sides of the point, or integer fraction, short enough
# that `read_number` reads it (MAX_SPAN) as `_INT`, the decimal rule or the `a/b` rule do.
_PLAIN = r'[^\\<>`"“]{0,4000}'
_FAST_RESPONSE = re.compile(
    rf"{_PLAIN}\\boxed\{{([+-]?)([0-9]{{1,60}})(?:\.([0-9]{{1,60}})|/([0-9]{{1,60}}))?\}}{_PLAIN}"
)
_FAST_FACTS_MAX = 65536
_fast_facts: dict[tuple[object, ...], tuple[int, tuple[str, ...], int, int] | None] = {}


def _facts(task: Task) -> tuple[int, tuple[str, ...], int, int] | None:
    """What the fast path needs of a task, computed once per distinct task content: (length of the shortest echo,
    the echoes, gold numerator, gold denominator), or None when the gold is not a rational number (symbolic golds,
    radicals) or the answer form is unknown: those tasks always take the full path."""
    prompt = task.prompt
    key = (
        prompt if type(prompt) is str else tuple((m.role, m.text()) for m in task.prompt_messages()),
        str(task.ground_truth),
        task.metadata.get("question"),
        task.metadata.get("answer_form"),
    )
    try:
        return _fast_facts[key]
    except KeyError:
        pass
    gold = _reading(key[1])
    gold = gold.value() if gold is not None else None
    facts = None
    if gold is not None and gold.radicand == 1 and key[3] in (None, *FORMS):
        texts = tuple(echoes(task))
        facts = (min(map(len, texts), default=0), texts, gold.coef.numerator, gold.coef.denominator)
    if len(_fast_facts) >= _FAST_FACTS_MAX:
        _fast_facts.clear()
    _fast_facts[key] = facts
    return facts


@functools.lru_cache(maxsize=64)
def _scored(format_weight: float, correct_weight: float, value: bool, form: bool) -> tuple[float, bool, dict]:
    """(reward, passed, components) of a numeric answer, from the rubric itself (once per combination)."""
    components = {"format": 1.0, "value": float(value), "form": float(form), "correct": float(value and form)}
    verdict = rubric(format_weight, correct_weight).combine(components)
    return verdict.reward, verdict.passed, verdict.components


def fast_verdict(task: Task, response: str, format_weight: float = 0.0, correct_weight: float = 1.0) -> Verdict | None:
    """The verdict of a plain one-box numeric response without extraction machinery, Fractions or validation, or
    None when the response or task needs the full rule (the caller then runs `full_verify`)."""
    match = _FAST_RESPONSE.fullmatch(response)
    if match is None:
        return None
    facts = _facts(task)
    if facts is None:
        return None
    shortest, texts, gold_num, gold_den = facts
    if len(response) >= shortest and any(text in response for text in texts):
        return None  # an echoed prompt is cut out before extraction: leave that to the full rule
    sign, whole, decimals, denominator = match.groups()
    if denominator is not None:
        num, den = int(whole), int(denominator)
        if den == 0:
            return None
        reduced = den > 1 and math.gcd(num, den) == 1  # `_fraction`'s rule, on the unsigned numerator
        notation_ok = reduced  # lowest_terms / simplest_radical accept a reduced fraction
        integer = False
    elif decimals is not None:
        num, den = int(whole + decimals), 10 ** len(decimals)
        notation_ok = integer = False  # a decimal is never in lowest-terms or radical form
    else:
        num, den = int(whole), 1
        notation_ok = integer = True
    if sign == "-":
        num = -num
    value = num * gold_den == gold_num * den
    form_name = task.metadata.get("answer_form")
    form = True if form_name is None else integer if form_name == "integer" else notation_ok
    try:
        reward, passed, components = _scored(format_weight, correct_weight, value, form)
    except (ValueError, TypeError):  # a non-finite or unhashable weight: the full path raises as it always did
        return None
    start = match.start(1)
    final = response[start : response.index("}", start)]  # the box's content, as `committed_answers` returns it
    if value and form:
        message = "Correct."
    elif value:
        message = f"Give the answer {FORMS.get(form_name, 'in the asked unit')}."
    else:
        message = f"Your answer {final if len(final) <= 60 else final[:57] + '...'} is not correct."
    return trusted(Verdict, {
        "reward": reward, "passed": passed, "valid": True, "components": dict(components),
        "feedback": message, "error": None,
    })  # fmt: skip


# ---- near misses for `rlvr-gym check-env` ------------------------------------------------------------------------
def format_number(value: Fraction) -> str:
    """The exact ground-truth spelling: `17`, `-2`, `3/4`, `-5/3`."""
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def _near_values(gold: Reading) -> list[str]:
    if gold.radicand != 1:
        coef, rad = gold.coef, gold.radicand
        return [
            f"{format_number(coef + 1)}\\sqrt{{{rad}}}",
            f"{format_number(coef)}\\sqrt{{{rad + 1}}}",
            f"{format_number(-coef)}\\sqrt{{{rad}}}",
        ]
    v = gold.coef
    values = {v + 1, v - 1, v * 10, -v if v else Fraction(1), v + Fraction(1, 2) if v.denominator == 1 else v * 2}
    return [format_number(x) for x in values if x != v]


def _form_misses(gold: Reading, form: str | None, unit: str | None) -> list[str]:
    """Right value, wrong written form (only where the task asks for a form or unit)."""
    misses = []
    v = gold.coef
    if gold.radicand != 1 and v.denominator == 1 and abs(v) > 1:  # the unsimplified radical
        misses.append(f"{'-' if v < 0 else ''}\\sqrt{{{v * v * gold.radicand}}}")
    if gold.radicand != 1 and v.denominator != 1:  # the radical left in the denominator
        misses.append(f"\\frac{{{v.numerator * gold.radicand}}}{{{v.denominator}\\sqrt{{{gold.radicand}}}}}")
    if form in ("lowest_terms", "integer") and gold.radicand == 1:
        misses.append(f"\\frac{{{2 * v.numerator}}}{{{2 * v.denominator}}}")
        if v.denominator in (1, 2, 4, 5, 8, 10, 20, 25):
            misses.append(f"{float(v):.4f}".rstrip("0") + ("0" if float(v).is_integer() else ""))
    if unit is not None and gold.radicand == 1:
        misses.append(f"{format_number(v)} \\text{{ {'kg' if canonical_unit(unit) != 'kg' else 'cm'}}}")
    return misses


def wrong_answers(task: Task, rng: random.Random) -> list[list[str]]:
    """Plausible trajectories that must not pass: near-miss numbers, unsimplified forms, the right value only in
    reasoning/code/quotes with a different final answer, and two different answers at once."""
    gold_text = str(task.ground_truth)
    gold = read_number(gold_text)
    if gold is not None:
        near = _near_values(gold)
        misses = near + _form_misses(gold, task.metadata.get("answer_form"), task.metadata.get("unit"))
    else:
        near = [f"{gold_text} + 1", f"2\\left({gold_text}\\right)", f"-\\left({gold_text}\\right)"]
        misses = list(near)
    other = rng.choice(near)
    wrong = [f"The final answer is \\boxed{{{miss}}}." for miss in misses]
    wrong += [
        f"<think>Maybe it is \\boxed{{{gold_text}}}.</think>\nThe final answer is \\boxed{{{other}}}.",
        f"```\nprint('\\boxed{{{gold_text}}}')\n```\nThe final answer is \\boxed{{{other}}}.",
        f"> Example: \\boxed{{{gold_text}}}\n\nThe final answer is \\boxed{{{other}}}.",
        f"The answer is \\boxed{{{gold_text}}} or \\boxed{{{other}}}.",
        f"The answer is \\boxed{{{other}}}, i.e. \\boxed{{{gold_text}}}.",
    ]
    return [[text] for text in wrong]
