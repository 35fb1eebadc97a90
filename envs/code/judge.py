"""Judging on the trusted side: the tests run in the verifier process, the candidate only answers calls.

The instrumented test module (`testsuite.TestPlan`) runs here, with the task's own helpers and fresh builtins.
Candidate names are `RemoteFunction`s: a call encodes its arguments as plain data and looks the value up in the
`CallBook`. Unknown calls are collected and raise `Pending`; the round goes on past them (statement guards), the
sandbox then computes all collected calls in one job, and the next round runs the tests again with those values
known. Tests whose arguments depend on earlier results need more rounds (bounded; HumanEval needs one job).

Why the verdict is out of the candidate's reach: the candidate never runs in this process and sees nothing but
call arguments; every value it returns arrives as plain data decoded into fresh builtin objects, so asserts,
`==`, builtins, the test module's globals, `__debug__` and tracing hooks here are all ours. Whatever the
sandboxed process prints (forged lines included) can only claim return values, i.e. earn what an honest program
returning those values would. Calls that exit, hang, crash, or return non-data are failed cases.

Tests draw randomness from a `random` module private to each round and seeded identically, so every round asks
the same calls and verdicts are reproducible in any process.
"""

from __future__ import annotations

import builtins
import importlib
import random
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from rlvr_gym.sandboxes.python_programs.job_lines import JobLines
from rlvr_gym.sandboxes.python_programs.plain_values import PlainDataError, decode_tree, encode, encode_tree

from .harness import CaseResult, TestRun
from .testsuite import CASE_FN, STMT_FN, UNIT_FN, TestPlan

RANDOM_SEED = 0


class Pending(BaseException):
    """A call whose value is not known in this round (a BaseException: test code's `except Exception` misses it)."""


class CandidateFailure(Exception):
    """A candidate call that produced no usable value; `kind` names why (shown as the case's error)."""

    def __init__(self, kind: str, message: str = "", line: int | None = None) -> None:
        super().__init__(message or kind)
        self.kind = kind
        self.line = line


_CONTROL_FLOW = (StopIteration, StopAsyncIteration)  # re-raised here they would end a test's loop early


def _builtin_exception(name: str) -> type[Exception] | None:
    """The builtin exception class the tests see for a candidate's `name`; None for control-flow classes."""
    value = vars(builtins).get(name)
    if isinstance(value, type) and issubclass(value, Exception) and not issubclass(value, _CONTROL_FLOW):
        return value
    return None


def realise(outcome: dict[str, Any]) -> Any:
    """The value a call's outcome stands for, or the exception the test sees instead."""
    if "value" in outcome:
        try:
            return decode_tree(outcome["value"])
        except PlainDataError as exc:
            raise CandidateFailure("NotPlainData", str(exc)) from None
    line = outcome.get("line") if type(outcome.get("line")) is int else None
    message = str(outcome.get("message", ""))[:300]
    if outcome.get("timeout") is True:
        raise CandidateFailure("CaseTimeout", "call time limit exceeded", line)
    if "bad" in outcome:
        raise CandidateFailure("NotPlainData", str(outcome["bad"])[:300], line)
    if "raised" in outcome:
        name = str(outcome["raised"])[:80]
        cls = _builtin_exception(name)
        if cls is None:  # a candidate-defined or non-Exception class: the test sees a generic failure
            raise CandidateFailure(name, message, line)
        try:
            exc = cls(message)
        except Exception:
            raise CandidateFailure(name, message, line) from None
        exc.rlvr_line = line  # type: ignore[attr-defined]
        raise exc
    raise CandidateFailure(outcome.get("kind", "NoResult"), message or "no value came back for this call", line)


@dataclass
class CallBook:
    """Every distinct call of one judgement: known outcomes and the batch still to compute."""

    units: tuple[str, ...] = ()
    max_calls: int = 4096
    final: bool = False  # last round: unknown calls fail instead of pending
    outcomes: dict[str, dict[str, Any]] = field(default_factory=dict)
    pending: dict[str, dict[str, Any]] = field(default_factory=dict)

    def lookup(self, key: str, spec: dict[str, Any]) -> dict[str, Any]:
        """The outcome of a known call; an unknown one joins the batch and raises `Pending`."""
        outcome = self.outcomes.get(key)
        if outcome is not None:
            return outcome
        if self.final:
            raise CandidateFailure("NoResult", "the call's arguments depend on too many earlier results")
        if key not in self.pending and len(self.outcomes) + len(self.pending) >= self.max_calls:
            raise CandidateFailure("TooManyCalls", f"more than {self.max_calls} distinct calls")
        self.pending.setdefault(key, spec)
        raise Pending

    def take(self) -> tuple[list[str], list[dict[str, Any]]]:
        keys, specs = list(self.pending), list(self.pending.values())
        self.pending = {}
        return keys, specs

    def settle(self, keys: list[str], lines: JobLines | None, failure: dict[str, Any] | None = None) -> None:
        """Record the outcome of every call of a batch; calls without a line fail (`NoResult`)."""
        for index, key in enumerate(keys):
            record = lines.calls.get(index) if lines is not None else None
            self.outcomes[key] = failure or record or {"kind": "NoResult"}

    def unit(self, index: int) -> Any:
        return realise(self.lookup(f"unit:{index}", {"expr": self.units[index]}))


class RemoteFunction:
    """A candidate function as the tests see it: plain-data arguments out, plain-data value back."""

    def __init__(self, book: CallBook, name: str) -> None:
        self._book = book
        self.__name__ = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            args_tree, kwargs_tree = encode_tree(args), encode_tree(kwargs)
            key = encode((self.__name__, args, kwargs))
        except PlainDataError as exc:
            raise CandidateFailure("Unsplittable", f"test argument is not plain data: {exc}") from None
        outcome = self._book.lookup(key, {"fn": self.__name__, "args": args_tree, "kwargs": kwargs_tree})
        value = realise(outcome)
        if "args_after" in outcome:
            _update_in_place(args, outcome["args_after"])
        return value

    def __repr__(self) -> str:
        return f"<candidate function {self.__name__}>"


def _update_in_place(args: tuple[Any, ...], after: Any) -> None:
    """Give the tests' own list/dict/set arguments the contents the candidate left in its copies."""
    try:
        changed = decode_tree(after)
    except PlainDataError as exc:
        raise CandidateFailure("NotPlainData", f"arguments after the call: {exc}") from None
    if type(changed) is not tuple or len(changed) != len(args):
        raise CandidateFailure("NotPlainData", "arguments after the call do not match the call")
    for mine, theirs in zip(args, changed, strict=True):
        if type(mine) is list and type(theirs) is list:
            mine[:] = theirs
        elif type(mine) in (dict, set) and type(theirs) is type(mine):
            mine.clear()
            mine.update(theirs)


@dataclass
class _Case:
    label: int | str
    pending: bool = False


class Round:
    """One execution of the instrumented tests; `results` maps case labels to outcomes."""

    def __init__(self) -> None:
        self.stack: list[_Case] = []
        self.results: dict[int | str, tuple[str, str | None, str, int | None]] = {}

    def case(self, label: int | str) -> Any:
        round_ = self

        class Case:
            def __enter__(self) -> None:
                round_.stack.append(_Case(label))

            def __exit__(self, kind: Any, exc: Any, tb: Any) -> bool:
                state = round_.stack.pop()
                if kind is Pending or (state.pending and (kind is None or issubclass(kind, Exception))):
                    round_.results[label] = ("pending", None, "", None)
                    return True
                if kind is None:
                    round_.results[label] = ("passed", None, "", None)
                    return True
                if not issubclass(kind, Exception):
                    return False  # KeyboardInterrupt and friends belong to the user
                error = getattr(exc, "kind", None) or kind.__name__
                line = getattr(exc, "line", None) or getattr(exc, "rlvr_line", None)
                round_.results[label] = ("failed", error, _text(exc), line)
                return True

        return Case()

    def statement(self) -> Any:
        round_ = self

        class Statement:
            def __enter__(self) -> None:
                return None

            def __exit__(self, kind: Any, exc: Any, tb: Any) -> bool:
                if not round_.stack:
                    return False
                if kind is Pending:
                    round_.stack[-1].pending = True
                    return True
                return bool(round_.stack[-1].pending and kind is not None and issubclass(kind, Exception))

        return Statement()


def _text(exc: BaseException) -> str:
    try:
        return str(exc)[:300]
    except Exception:
        return type(exc).__name__


def _private_random() -> types.ModuleType:
    """A `random` module whose functions draw from one private generator with a fixed seed."""
    rng = random.Random(RANDOM_SEED)
    module = types.ModuleType("random")
    for name in dir(random):
        value = getattr(random, name)
        bound = getattr(value, "__self__", None) is getattr(random, "_inst", None)
        setattr(module, name, getattr(rng, name) if bound and callable(value) else value)
    return module


def _test_builtins(rand: types.ModuleType) -> dict[str, Any]:
    table = dict(vars(builtins))
    real_import = builtins.__import__

    def import_(name: str, globals_: Any = None, locals_: Any = None, fromlist: Any = (), level: int = 0) -> Any:
        return rand if name == "random" and level == 0 else real_import(name, globals_, locals_, fromlist, level)

    table["__import__"] = import_
    table["print"] = lambda *args, **kwargs: None
    return table


@lru_cache(maxsize=512)
def _compiled(source: str, name: str) -> types.CodeType:
    return compile(source, name, "exec", dont_inherit=True, optimize=0)


def run_round(plan: TestPlan, book: CallBook) -> tuple[Round, list[str]]:
    """Run the tests once in a fresh namespace; returns the round and the errors of the task's own code."""
    round_ = Round()
    rand = _private_random()
    namespace: dict[str, Any] = {"__name__": "__rlvr_tests__", "__builtins__": _test_builtins(rand)}
    errors: list[str] = []
    if plan.preamble:
        try:
            exec(_compiled(plan.preamble, "<task preamble>"), namespace)
        except Exception as exc:
            errors.append(f"preamble: {type(exc).__name__}: {_text(exc)}")
    for name in plan.modules:
        namespace[name] = rand if name == "random" else importlib.import_module(name)
    for name in plan.remote_names:
        namespace[name] = RemoteFunction(book, name)
    namespace.update({CASE_FN: round_.case, STMT_FN: round_.statement, UNIT_FN: book.unit})
    exec(_compiled(plan.source, "<tests>"), namespace)
    return round_, errors


JobRunner = Callable[[list[dict[str, Any]]], tuple[JobLines | None, str, str | None]]
"""Runs one batch of calls in the sandbox: (parsed lines or None, sandbox status, sandbox error)."""


def judge(plan: TestPlan, run_job: JobRunner, *, max_jobs: int = 4, max_calls: int = 4096) -> TestRun:
    """Judge one candidate (its program is bound into `run_job`) against `plan`."""
    book = CallBook(units=plan.units, max_calls=max_calls)
    jobs, status, finished = 0, "not run", True
    load: dict[str, Any] | None = None
    setup_errors: list[str] = []
    while True:
        round_, errors = run_round(plan, book)
        if not book.pending:
            break
        if jobs >= max_jobs:
            book.final = True
            book.pending = {}
            round_, errors = run_round(plan, book)
            break
        keys, specs = book.take()
        if load is not None and load.get("load") is not True:
            book.settle(keys, None, {"kind": "LoadError", "message": "the candidate module did not load"})
            continue
        lines, status, sandbox_error = run_job(specs)
        jobs += 1
        if sandbox_error is not None:
            return TestRun([], False, False, status, sandbox_error=sandbox_error, mode=plan.mode, jobs=jobs)
        load = lines.load if lines is not None and lines.load is not None else {"load": False, "raised": "NoResult"}
        finished = finished and lines is not None and lines.done
        if lines is not None and lines.setup_error and not setup_errors:
            setup_errors.append(f"test setup in the sandbox: {lines.setup_error}")
        loaded = load.get("load") is True
        book.settle(keys, lines, None if loaded else {"kind": "LoadError", "message": "the candidate did not load"})
    return _test_run(plan, round_, errors + setup_errors, load, finished, status, jobs, len(book.outcomes))


def _test_run(
    plan: TestPlan,
    round_: Round,
    errors: list[str],
    load: dict[str, Any] | None,
    finished: bool,
    status: str,
    jobs: int,
    calls: int,
) -> TestRun:
    cases = []
    for index in range(plan.num_cases):
        state, error, message, line = round_.results.get(index, ("failed", "NoResult", "the case did not run", None))
        cases.append(CaseResult(index, state == "passed", error, message, line))
    setup_errors = errors + [
        f"{error}: {message}"
        for label, (state, error, message, _) in round_.results.items()
        if isinstance(label, str) and state == "failed"
    ]
    loaded = load is None or load.get("load") is True
    load_error = None if loaded else f"{load.get('raised', 'error')}: {str(load.get('message', ''))[:300]}"
    load_line = None if loaded or type(load.get("line")) is not int else load["line"]
    return TestRun(cases, loaded, finished, status, load_error, load_line, setup_errors, None, plan.mode, jobs, calls)
