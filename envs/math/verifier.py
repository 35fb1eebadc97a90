"""The math verifier: extract the final answer, then decide equivalence with the gold answer.

Two paths. Plain numbers on both sides (every generated task, most word problems) are compared exactly as
`Fraction`s: no sympy, microseconds. Anything symbolic goes to math-verify (sympy-backed: LaTeX, roots, pi,
intervals, sets, equations), with the gold parse cached per gold string and the prediction limited to the short
extracted span. math-verify's own timeouts use SIGALRM, which only works in the main thread; elsewhere we call
it with timeouts off and instead refuse, before any evaluation, expressions whose value would be astronomically
large (`2^{10^{10}}`, `100000!`), which is what makes sympy hang on short inputs.
"""

from __future__ import annotations

import functools
import math
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rlvr_gym import Criterion, Rubric, Verdict

from .extract import Extraction, MultiplePolicy, canonical_key, extract_answer
from .numeric import decimal_places, numbers_match, parse_number, parse_percent

_SYMPY_LOCK = threading.Lock()  # sympy's global caches are not documented as thread-safe; the GIL serialises anyway


@dataclass(frozen=True)
class AnswerCheck:
    """What the verifier found: the extracted answer (None: no usable answer), whether it is correct, and why."""

    answer: str | None
    correct: bool
    method: str
    reason: str = ""

    @property
    def formatted(self) -> bool:
        return self.answer is not None


def _component(name: str):
    return lambda **values: values[name]


def _log10_bound(expr: Any, max_digits: float) -> float:
    """Upper bound on log10|value| of a numeric sympy tree; raises OverflowError past `max_digits` digits.

    Symbolic leaves count as 1; a power of a symbol with a huge exponent is refused too (expansion would blow up).
    """
    import sympy

    if isinstance(expr, sympy.Integer | sympy.Rational):
        return max(abs(expr.p), abs(expr.q), 1).bit_length() * math.log10(2)
    if isinstance(expr, sympy.Pow):
        base, exponent = expr.args
        exp_digits = _log10_bound(exponent, max_digits)
        if exp_digits > 7:
            raise OverflowError("exponent too large")
        exp_value = 10**exp_digits
        base_digits = _log10_bound(base, max_digits)
        digits = max(base_digits, 1.0) * exp_value if not base.is_number else base_digits * exp_value
        if digits > max_digits:
            raise OverflowError("power too large")
        return digits
    if isinstance(expr, sympy.factorial | sympy.factorial2 | sympy.gamma | sympy.binomial):
        n_digits = _log10_bound(expr.args[0], max_digits)
        if n_digits > 6 or (10**n_digits) * max(n_digits, 1.0) > max_digits:
            raise OverflowError("factorial too large")
        return (10**n_digits) * max(n_digits, 1.0)
    args = getattr(expr, "args", ())
    if not isinstance(args, tuple) or not args:
        return 1.0
    bounds = [_log10_bound(arg, max_digits) for arg in args if isinstance(arg, sympy.Basic)]
    if not bounds:
        return 1.0
    total = sum(bounds) if isinstance(expr, sympy.Mul) else max(bounds) + math.log10(len(bounds) + 1)
    if total > max_digits:
        raise OverflowError("value too large")
    return total


_EXPONENT = re.compile(r"\^\s*\{?\s*[-+]?\s*(\d+)")
_FACTORIAL = re.compile(r"(\d+)\s*!")
_BINOMIAL = re.compile(r"\\[dt]?binom\s*\{?\s*(\d+)|(\d+)\s*\\choose")


def _plausible_text(span: str, max_depth: int = 12) -> bool:
    """Cheap screen before any sympy work: refuse deep nesting and huge exponents, factorials or binomials.

    latex2sympy evaluates numerals while parsing, so `((9^{999})^{999})^{999}` or `\\binom{100000}{50000}` cost
    seconds before math-verify's comparison (and its timeout) even starts; deep bracket nesting is slow too.
    """
    depth = peak = 0
    for char in span:
        if char in "({[":
            depth += 1
            peak = max(peak, depth)
        elif char in ")}]":
            depth -= 1
    if peak > max_depth or span.count("^") > max_depth:
        return False
    exponents = [len(m.group(1)) for m in _EXPONENT.finditer(span)]
    if any(n >= 5 for n in exponents) or sum(n >= 3 for n in exponents) > 1:
        return False
    if any(len(m.group(1)) >= 4 for m in _FACTORIAL.finditer(span)):
        return False
    return not any(len(m.group(1) or m.group(2)) >= 5 for m in _BINOMIAL.finditer(span))


def _within_size(parsed: Sequence[Any], max_digits: int) -> bool:
    try:
        for item in parsed:
            if not isinstance(item, str):
                _log10_bound(item, max_digits)
    except (OverflowError, RecursionError, ValueError, TypeError):
        return False
    return True


@functools.lru_cache(maxsize=16384)
def _parse_latex(text: str, timeout: int | None) -> tuple[Any, ...]:
    """math-verify's parse of one short span; shared by every verifier, so each gold answer is parsed once."""
    import math_verify

    with _SYMPY_LOCK:
        return tuple(math_verify.parse(f"${text}$", parsing_timeout=timeout))


@functools.lru_cache(maxsize=16384)
def _symbolic_equal(answer: str, gold: str, timeout: int | None, max_digits: int) -> bool:
    import math_verify

    if not _plausible_text(answer):
        return False
    gold_parsed = _parse_latex(gold, timeout)
    pred_parsed = _parse_latex(answer, timeout)
    if not gold_parsed or not pred_parsed or not _within_size(pred_parsed, max_digits):
        return False
    with _SYMPY_LOCK:
        return bool(math_verify.verify(list(gold_parsed), list(pred_parsed), timeout_seconds=timeout))


class MathVerifier:
    """Pure, deterministic verdicts of model outputs against gold answers (usable without any env).

    Components: `format` (an answer could be extracted; weight 0 by default, i.e. a metric) and `correct`
    (weight 1). `passed` is `correct`.
    """

    def __init__(
        self,
        *,
        format_weight: float = 0.0,
        correct_weight: float = 1.0,
        multiple_answers: MultiplePolicy = "reject",
        max_answer_chars: int = 300,
        max_boxes: int = 32,
        timeout_s: int = 5,
        max_result_digits: int = 10_000,
        min_rounded_decimals: int = 6,
    ) -> None:
        self.rubric = Rubric(
            [
                Criterion("format", _component("format"), format_weight),
                Criterion("correct", _component("correct"), correct_weight),
            ],
            pass_on="correct",
        )
        self.multiple_answers = multiple_answers
        self.max_answer_chars = max_answer_chars
        self.max_boxes = max_boxes
        self.timeout_s = timeout_s
        self.max_result_digits = max_result_digits
        self.min_rounded_decimals = min_rounded_decimals

    # ---- extraction ------------------------------------------------------------------------------------------
    def extract(self, output: str, *, question: str | Sequence[str] | None = None) -> Extraction:
        """The answer span of `output`, after removing verbatim echoes of the question (so an echo never scores)."""
        if not isinstance(output, str):
            output = output.decode("utf-8", "replace") if isinstance(output, bytes | bytearray) else str(output)
        echoes = [question] if isinstance(question, str) else list(question or [])
        for echo in sorted((e for e in echoes if e and e.strip()), key=len, reverse=True):
            output = output.replace(echo, "\n")
        return extract_answer(
            output,
            max_chars=self.max_answer_chars,
            max_boxes=self.max_boxes,
            multiple=self.multiple_answers,
            same=self._same_spelling,
        )

    def _same_spelling(self, a: str, b: str) -> bool:
        """Cheap agreement test between two boxed answers (exact numbers, else canonical spelling)."""
        x, y = parse_number(a), parse_number(b)
        if x is not None and y is not None:
            return x == y
        return canonical_key(a) == canonical_key(b)

    # ---- equivalence -----------------------------------------------------------------------------------------
    def equivalent(self, answer: str, gold: str) -> bool:
        """Whether an extracted answer span means the gold answer."""
        answer, gold = answer.strip(), str(gold).strip()
        if not answer or not gold:
            return False
        pred_value, gold_value = parse_number(answer), parse_number(gold)
        if pred_value is not None and gold_value is not None:
            return pred_value == gold_value or numbers_match(
                pred_value, gold_value, decimal_places(answer), min_rounded_decimals=self.min_rounded_decimals
            )
        percent = parse_percent(answer) if gold_value is not None else None
        if percent is not None:  # "25%" answers both "what percent" (25) and "what fraction" (0.25) questions
            return percent == gold_value or percent / 100 == gold_value
        if canonical_key(answer) == canonical_key(gold):
            return True
        if len(answer) > self.max_answer_chars:
            return False
        return self._symbolic(answer, gold)

    def _timeout(self) -> int | None:
        """math-verify's SIGALRM timeouts only in the main thread; elsewhere the size guard stands in for them."""
        if self.timeout_s and threading.current_thread() is threading.main_thread():
            return max(1, int(self.timeout_s))
        return None

    def _symbolic(self, answer: str, gold: str) -> bool:
        return _symbolic_equal(answer, gold, self._timeout(), self.max_result_digits)

    # ---- verdicts --------------------------------------------------------------------------------------------
    def check(self, output: str, gold: str, *, question: str | Sequence[str] | None = None) -> AnswerCheck:
        extraction = self.extract(output, question=question)
        if extraction.answer is None:
            return AnswerCheck(None, False, extraction.method, extraction.reason)
        try:
            correct = self.equivalent(extraction.answer, gold)
        except Exception as exc:  # a verifier bug must score 0, never crash a rollout
            return AnswerCheck(extraction.answer, False, extraction.method, f"verifier error: {type(exc).__name__}")
        return AnswerCheck(extraction.answer, correct, extraction.method, "" if correct else "not equivalent")

    def verdict(self, output: str, gold: str, *, question: str | Sequence[str] | None = None) -> Verdict:
        result = self.check(output, gold, question=question)
        if result.answer is None:
            detail = "" if result.reason == "no final answer found" else f" ({result.reason})"
            message = f"No usable final answer{detail}. Put your final answer in \\boxed{{}}."
        elif result.correct:
            message = "Correct."
        else:
            shown = result.answer if len(result.answer) <= 80 else result.answer[:77] + "..."
            message = f"Your answer {shown} is not correct."
        verdict = self.rubric.combine(
            {"format": float(result.formatted), "correct": float(result.correct)}, feedback=message
        )
        if result.reason.startswith("verifier error"):
            verdict = verdict.model_copy(update={"error": result.reason})
        return verdict

    __call__ = verdict


@functools.lru_cache(maxsize=1)
def default_verifier() -> MathVerifier:
    return MathVerifier()


def verify_answer(output: str, gold: str, *, question: str | Sequence[str] | None = None) -> Verdict:
    """Score one output against one gold answer with the default verifier settings."""
    return default_verifier().verdict(output, gold, question=question)
