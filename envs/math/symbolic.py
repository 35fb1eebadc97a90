"""Symbolic equivalence through math-verify, for gold answers that are not plain numbers (dataset files only).

Generated tasks never come here: their golds are numbers and only number notations are accepted for them, so an
answer that restates the question (`3/4 + 1/8`) is not a notation of the value. Dataset golds such as intervals,
sets or expressions are compared by math-verify (sympy), with two guards: a cheap screen refuses spans whose
evaluation would be astronomically large (`2^{10^{10}}`, `100000!`) before sympy sees them, and math-verify's
SIGALRM timeouts are used in the main thread only (elsewhere they cannot work, and the screen stands in).
"""

from __future__ import annotations

import functools
import math
import re
import threading
from collections.abc import Sequence
from typing import Any

_SYMPY_LOCK = threading.Lock()  # sympy's global caches are not documented as thread-safe
_EXPONENT = re.compile(r"\^\s*\{?\s*[-+]?\s*(\d+)")
_FACTORIAL = re.compile(r"(\d+)\s*!")
_BINOMIAL = re.compile(r"\\[dt]?binom\s*\{?\s*(\d+)|(\d+)\s*\\choose")
MAX_RESULT_DIGITS = 10_000


def plausible(span: str, max_depth: int = 12) -> bool:
    """Refuse deep nesting and huge exponents, factorials or binomials (latex2sympy evaluates while parsing)."""
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


def _log10_bound(expr: Any, max_digits: float) -> float:
    """Upper bound on log10|value| of a sympy tree; raises OverflowError past `max_digits` digits."""
    import sympy

    if isinstance(expr, sympy.Integer | sympy.Rational):
        return max(abs(expr.p), abs(expr.q), 1).bit_length() * math.log10(2)
    if isinstance(expr, sympy.Pow):
        base, exponent = expr.args
        exp_digits = _log10_bound(exponent, max_digits)
        if exp_digits > 7:
            raise OverflowError("exponent too large")
        base_digits = _log10_bound(base, max_digits)
        digits = (base_digits if base.is_number else max(base_digits, 1.0)) * 10**exp_digits
        if digits > max_digits:
            raise OverflowError("power too large")
        return digits
    if isinstance(expr, sympy.factorial | sympy.factorial2 | sympy.gamma | sympy.binomial):
        n_digits = _log10_bound(expr.args[0], max_digits)
        if n_digits > 6 or (10**n_digits) * max(n_digits, 1.0) > max_digits:
            raise OverflowError("factorial too large")
        return (10**n_digits) * max(n_digits, 1.0)
    args = [arg for arg in getattr(expr, "args", ()) if isinstance(arg, sympy.Basic)]
    if not args:
        return 1.0
    bounds = [_log10_bound(arg, max_digits) for arg in args]
    total = sum(bounds) if isinstance(expr, sympy.Mul) else max(bounds) + math.log10(len(bounds) + 1)
    if total > max_digits:
        raise OverflowError("value too large")
    return total


def _within_size(parsed: Sequence[Any]) -> bool:
    try:
        for item in parsed:
            if not isinstance(item, str):
                _log10_bound(item, MAX_RESULT_DIGITS)
    except (OverflowError, RecursionError, ValueError, TypeError):
        return False
    return True


def _timeout(seconds: int) -> int | None:
    return seconds if seconds and threading.current_thread() is threading.main_thread() else None


@functools.lru_cache(maxsize=16384)
def _parse(text: str, timeout: int | None) -> tuple[Any, ...]:
    import math_verify

    with _SYMPY_LOCK:
        return tuple(math_verify.parse(f"${text}$", parsing_timeout=timeout))


@functools.lru_cache(maxsize=16384)
def _equal(answer: str, gold: str, timeout: int | None) -> bool:
    import math_verify

    if not plausible(answer):
        return False
    gold_parsed, pred_parsed = _parse(gold, timeout), _parse(answer, timeout)
    if not gold_parsed or not pred_parsed or not _within_size(pred_parsed):
        return False
    with _SYMPY_LOCK:
        return bool(math_verify.verify(list(gold_parsed), list(pred_parsed), timeout_seconds=timeout))


def symbolic_equal(answer: str, gold: str, timeout_s: int = 5) -> bool:
    """math-verify's judgement of two short LaTeX spans (False on any parser failure)."""
    try:
        return _equal(answer, gold, _timeout(timeout_s))
    except Exception:  # a sympy failure on hostile input is "not shown equal", never a crash
        return False


def _kind(parsed: Any) -> tuple[str, frozenset[str]]:
    """The shape of a parsed answer (interval, set, tuple, equation, matrix, expression or number) and its symbols."""
    import sympy

    shapes = (
        (sympy.Interval, "interval"),
        (sympy.Union, "interval"),
        (sympy.FiniteSet, "set"),
        (sympy.Tuple, "tuple"),
        (sympy.core.relational.Relational, "equation"),
        (sympy.MatrixBase, "matrix"),
    )
    shape = next((name for cls, name in shapes if isinstance(parsed, cls)), None)
    symbols = frozenset(str(s) for s in getattr(parsed, "free_symbols", ()))
    if shape is None:
        shape = "expression" if symbols else "number" if isinstance(parsed, sympy.Basic) else type(parsed).__name__
    return shape, symbols


@functools.lru_cache(maxsize=16384)
def _same_kind(answer: str, gold: str, timeout: int | None) -> bool:
    if not plausible(answer):
        return False
    gold_parsed, pred_parsed = _parse(gold, timeout), _parse(answer, timeout)
    if not gold_parsed or not pred_parsed:
        return False
    (gold_shape, gold_symbols), (shape, symbols) = _kind(gold_parsed[0]), _kind(pred_parsed[0])
    return shape == gold_shape and symbols <= gold_symbols


def same_kind(answer: str, gold: str, timeout_s: int = 5) -> bool:
    """Whether a wrong answer is still an answer of the gold's kind: the same shape, and no symbol the gold lacks (so
    a template placeholder such as `N` or `x` is not an answer to a numeric or x-free question)."""
    try:
        return _same_kind(answer, gold, _timeout(timeout_s))
    except Exception:  # a sympy failure on hostile input is "not an answer", never a crash
        return False
