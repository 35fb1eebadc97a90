"""Execution-aware reward for robot programs: named components, decided from traces the parent rebuilt itself.

Components (all in [0, 1]):
- `syntax`      the program parses (an unparseable one is an invalid response).
- `functional`  fraction of world states whose temporal check holds on the trusted trace of a clean run
                (a robot error, program error, timeout or inconsistent log fails that state); `passed` needs all.
- `executable`  fraction of robustness runs (random answers, as in the spec's executability mode) that end
                cleanly.
- `style`       1 - min(ruff findings, 10) / 10 (pycodestyle + pyflakes rules via `envs.code.style`).
- `security`    1 - min(findings, 5) / 5 (the bandit-style AST rules of `envs.code.security`).
The reward is the weighted sum divided by the sum of weights; by default only `functional` is weighted (the
others are metrics). Syntax, executability, style and security count only once at least one state passes, so
a program that does nothing earns nothing whatever the weights.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rlvr_gym import Task, Verdict
from rlvr_gym.family import stable_seed

from .checkspec import compile_check
from .execution import RobotExecutor, RunOutcome, shared_executor
from .program import extract, parse, violations
from .replay import API
from .simulator import WorldState
from .temporal import Check

DEFAULT_WEIGHTS: dict[str, float] = {"functional": 1.0, "syntax": 0.0, "executable": 0.0, "style": 0.0,
                                     "security": 0.0}  # fmt: skip
STYLE_CAP, SECURITY_CAP = 10, 5
ROBUSTNESS_RUNS = 2


def _weights(weights: Mapping[str, float] | None) -> dict[str, float]:
    merged = {**DEFAULT_WEIGHTS, **(weights or {})}
    unknown = set(merged) - set(DEFAULT_WEIGHTS)
    if unknown or any(w < 0 or not math.isfinite(w) for w in merged.values()) or sum(merged.values()) <= 0:
        raise ValueError(f"bad robot reward weights {weights!r}: names {sorted(DEFAULT_WEIGHTS)}, non-negative")
    return merged


def _style(code: str) -> float:
    from rlvr_gym.envs.code.style import style_findings

    findings, _tool = style_findings(code)
    own = [f for f in findings if not (f.rule == "F821" and any(f"`{name}`" in f.message for name in API))]
    return 1.0 - min(len(own), STYLE_CAP) / STYLE_CAP  # the robot API is defined for the program, not by it


def _security(tree: Any) -> float:
    from rlvr_gym.envs.code.security import security_findings

    return 1.0 - min(len(security_findings(tree)), SECURITY_CAP) / SECURITY_CAP


def state_passes(check: Check, outcome: RunOutcome, timeout_ok: bool = False) -> bool:
    """A state passes when its run was clean (or did not finish, where that is allowed) and the check holds.

    "Did not finish" is a timeout or the call limit: waiting loops sleep on the job's virtual clock, so a program
    that waits forever ends at the call limit rather than on the wall clock."""
    unfinished = outcome.end in ("timeout", "call_limit")
    ran = outcome.clean or (timeout_ok and unfinished and outcome.robot_error is None)
    return ran and check(outcome.trace)


def checks_of(truth: dict[str, Any]) -> list[Check]:
    """One trusted check per state: our plain-data specs, or an eval-only RoboEval checkout's own tests."""
    if truth.get("kind") == "roboeval":
        from .roboeval import judges

        return judges(truth)
    return [compile_check(spec) for spec in truth["checks"]]


def _describe(outcome: RunOutcome) -> str:
    if outcome.robot_error:
        return f"robot error: {outcome.robot_error}"
    if outcome.end != "ok":
        return f"{outcome.end}{': ' + outcome.detail if outcome.detail else ''}"
    return "the run finished but the task's conditions do not hold"


def robustness_seeds(task: Task, n: int = ROBUSTNESS_RUNS) -> list[int]:
    return [stable_seed("robot-robustness", task.id, k) % 2**31 for k in range(n)]


@dataclass(frozen=True)
class Judgement:
    """A verdict with the evidence behind it (for token-level penalties and records)."""

    verdict: Verdict
    code: str | None = None
    offset: int = 0
    problems: tuple[str, ...] = ()  # syntax error or policy breaches, each "line N: ..." when located
    outcomes: tuple[RunOutcome, ...] = ()
    passes: tuple[bool, ...] = ()


def verify(
    task: Task,
    trajectory: Sequence[str],
    *,
    executor: RobotExecutor | None = None,
    weights: Mapping[str, float] | None = None,
    robustness_runs: int = ROBUSTNESS_RUNS,
) -> Verdict:
    """Judge the last action of `trajectory` as the task's robot program."""
    return judge(task, trajectory, executor=executor, weights=weights, robustness_runs=robustness_runs).verdict


def judge(
    task: Task,
    trajectory: Sequence[str],
    *,
    executor: RobotExecutor | None = None,
    weights: Mapping[str, float] | None = None,
    robustness_runs: int = ROBUSTNESS_RUNS,
) -> Judgement:
    """`verify` with its evidence: the program, where it starts in the response, problems and run outcomes."""
    w = _weights(weights)
    text = trajectory[-1] if trajectory else ""
    found = extract(text)
    if found.code is None:
        return Judgement(Verdict.invalid(found.problem))
    tree = parse(found.code)
    if isinstance(tree, str):
        verdict = Verdict.invalid(f"the program does not parse: {tree}", components={"syntax": 0.0})
        return Judgement(verdict, found.code, found.offset, (tree,))
    truth = task.ground_truth
    states = [WorldState.from_json(s) for s in truth["states"]]
    checks, timeout_ok = checks_of(truth), truth.get("timeout_ok") or [False] * len(states)
    components = {"syntax": 1.0, "functional": 0.0, "executable": 0.0, "style": _style(found.code),
                  "security": _security(tree)}  # fmt: skip
    broken = violations(tree)
    if broken:
        verdict = _combine(w, components, False, "the program breaks the robot-program rules: " + "; ".join(broken))
        return Judgement(verdict, found.code, found.offset, tuple(broken))
    seeds = robustness_seeds(task, robustness_runs)
    runs = [(s, None) for s in states] + [(states[k % len(states)], seed) for k, seed in enumerate(seeds)]
    outcomes = (executor or shared_executor()).run(found.code, runs)
    checked, robust = outcomes[: len(states)], outcomes[len(states) :]
    passes = [state_passes(c, o, t) for c, o, t in zip(checks, checked, timeout_ok, strict=True)]
    components["functional"] = sum(passes) / len(passes)
    components["executable"] = sum(o.clean for o in robust) / len(robust) if robust else 1.0
    notes = [f"state {i + 1}: {_describe(o)}" for i, (o, ok) in enumerate(zip(checked, passes, strict=True)) if not ok]
    feedback = "all world states pass" if all(passes) else "; ".join(notes)
    verdict = _combine(w, components, all(passes), feedback)
    return Judgement(verdict, found.code, found.offset, (), tuple(outcomes), tuple(passes))


def _combine(w: dict[str, float], components: dict[str, float], passed: bool, feedback: str) -> Verdict:
    gate = 1.0 if components["functional"] > 0 else 0.0
    total = sum(v * (1.0 if k == "functional" else gate) * components[k] for k, v in w.items())
    return Verdict(reward=total / sum(w.values()), passed=passed, components=components, feedback=feedback[:2000])


def wrong_answers(task: Task, rng: random.Random) -> list[list[str]]:
    """Mutated reference programs (wrong room, wrong order, missing step, hard-coded state) plus a robot misuse."""
    mutants = [f"```python\n{m}```" for m in task.ground_truth.get("mutants", [])]
    misuse = '```python\ndef task_program():\n    place("nothing")\n```'
    return [[m] for m in [*mutants, misuse]]
