"""Which hidden test cases a trivial program passes: the floor partial credit is measured from.

A constant body (`return True`, `return 0`, `return None`, `return []`) or an identity (`return x`) passes some
tests of many problems (a predicate that is usually False, a list that is often empty). Paying for those cases pays
for doing nothing, so partial credit counts only the cases that no trivial program passes (docs/code-env.md).

Nothing runs in a sandbox here: a trivial program's value for a call is known without running it (the constant,
or the call's own argument), so the judge (`judge.py`) answers its calls from that table and the task's tests run
in this process as they do for any candidate. The result is cached per test plan.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from rlvr_gym.sandboxes.python_programs.job_lines import JobLines
from rlvr_gym.sandboxes.python_programs.plain_values import PlainDataError, encode_tree

from .judge import judge
from .testsuite import TestPlan

CONSTANTS: tuple[Any, ...] = (None, True, False, 0, 1, -1, 0.0, "", [], (), {})
IDENTITY_ARGS = 3  # `return <argument i>` for i < 3

Answer = Callable[[dict[str, Any]], dict[str, Any]]


def _constant(value: Any) -> Answer:
    tree = encode_tree(value)
    return lambda call: {"value": tree}


def _identity(position: int) -> Answer:
    def answer(call: dict[str, Any]) -> dict[str, Any]:
        args = call.get("args")  # the call's positional arguments, a tuple as plain data: {"t": [...]}
        items = args.get("t") if isinstance(args, dict) else None
        if isinstance(items, list) and position < len(items):
            return {"value": items[position]}
        return {"kind": "NoResult"}

    return answer


def trivial_answers() -> dict[str, Answer]:
    """name -> how that trivial program answers one call spec (`{"fn", "args", "kwargs"}` or a unit `expr`)."""
    answers = {f"return {value!r}": _constant(value) for value in CONSTANTS}
    answers.update({f"return argument {i}": _identity(i) for i in range(IDENTITY_ARGS)})
    return answers


def _runner(answer: Answer) -> Callable[[list[dict[str, Any]]], tuple[JobLines, str, None]]:
    def run_job(calls: list[dict[str, Any]]) -> tuple[JobLines, str, None]:
        outcomes = {i: (answer(call) if "fn" in call else {"kind": "NoResult"}) for i, call in enumerate(calls)}
        return JobLines(load={"load": True}, calls=outcomes, done=True), "ok", None

    return run_job


@lru_cache(maxsize=1024)
def trivially_passed(plan: TestPlan) -> frozenset[int]:
    """Indices of the cases that at least one trivial program passes (units-mode calls count as failed)."""
    passed: set[int] = set()
    for answer in trivial_answers().values():
        try:
            run = judge(plan, _runner(answer))
        except (PlainDataError, RecursionError, MemoryError):
            continue
        passed.update(case.index for case in run.cases if case.passed)
    return frozenset(passed)


def beyond_trivial(plan: TestPlan, passed: set[int]) -> float:
    """Share of the non-trivial cases among `passed`; with no non-trivial case, 1 only when every case passed."""
    trivial = trivially_passed(plan)
    hard = set(range(plan.num_cases)) - trivial
    if not hard:
        return float(plan.num_cases > 0 and len(passed) == plan.num_cases)
    return len(hard & passed) / len(hard)
