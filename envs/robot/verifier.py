"""Execution-aware reward for robot programs: named components, decided from traces the parent rebuilt itself.

Components (all in [0, 1]):
- `syntax`      the program parses (an unparseable one is an invalid response).
- `functional`  fraction of world states whose temporal check holds on the trusted trace of a run that ended
                normally (robot errors the program caught are no failure, as in the original), or, where the state
                allows it (`timeout_ok`), did not finish; `passed` needs all.
- `temporal`    per state, the fraction of the check's top-level conditions that hold on that trace (0 for a
                run that failed), averaged over states: partial credit for a program that is nearly right.
- `executable`  fraction of robustness runs (random answers, as in the spec's executability mode) that end
                cleanly.
- `style`       1 - min(ruff findings, 10) / 10 (pycodestyle + pyflakes rules,
                `sandboxes/python_programs/style.py`).
- `security`    1 - min(findings, 5) / 5 (the bandit-style AST rules of `sandboxes/python_programs/security.py`).
- `penalty`     the token-level penalties of `penalties.py` summed over the response, clamped to [-1, 0].
The reward is the weighted mean of the [0, 1] components plus `weights["penalty"]` x `penalty`. By default it
is mixed: functional 0.8, temporal 0.2, penalty 0.1 (so the token penalties reach any trainer through the env's
reward); a perfect program earns 1. Everything but `functional` and `penalty` counts only once at least one
state passes, so a program that passes nothing earns at most 0 whatever the weights; a response without a
program gets the lowest penalty (-1), so writing nothing never beats writing a wrong program.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rlvr_gym import Task, Verdict
from rlvr_gym.family import stable_seed
from rlvr_gym.sandboxes.python_programs.security import security_findings
from rlvr_gym.sandboxes.python_programs.style import style_findings

from .checkspec import compile_check
from .execution import RobotExecutor, RunOutcome, shared_executor
from .program import extract, parse, violations
from .replay import API
from .simulator import WorldState
from .temporal import Check

DEFAULT_WEIGHTS: dict[str, float] = {"functional": 0.8, "temporal": 0.2, "syntax": 0.0, "executable": 0.0,
                                     "style": 0.0, "security": 0.0, "penalty": 0.1}  # fmt: skip
UNGATED = ("functional", "penalty")
STYLE_CAP, SECURITY_CAP = 10, 5
ROBUSTNESS_RUNS = 2


def _weights(weights: Mapping[str, float] | None) -> dict[str, float]:
    merged = {**DEFAULT_WEIGHTS, **(weights or {})}
    unknown = set(merged) - set(DEFAULT_WEIGHTS)
    scored = sum(w for k, w in merged.items() if k != "penalty")
    if unknown or any(w < 0 or not math.isfinite(w) for w in merged.values()) or not scored > 0:
        raise ValueError(f"bad robot reward weights {weights!r}: names {sorted(DEFAULT_WEIGHTS)}, non-negative")
    return merged


def _style(code: str) -> float:
    findings, _tool = style_findings(code)
    own = [f for f in findings if not (f.rule == "F821" and any(f"`{name}`" in f.message for name in API))]
    return 1.0 - min(len(own), STYLE_CAP) / STYLE_CAP  # the robot API is defined for the program, not by it


def _security(tree: Any) -> float:
    return 1.0 - min(len(security_findings(tree)), SECURITY_CAP) / SECURITY_CAP


def ran(outcome: RunOutcome, timeout_ok: bool = False) -> bool:
    """The run counts: it ended normally, or did not finish where the state allows that (the original's
    `timeout: True`). "Did not finish" is a timeout (sleeps on the job's virtual clock count against the run's
    limit) or the call limit (where a waiting loop that never sleeps ends)."""
    return outcome.clean or (timeout_ok and outcome.end in ("timeout", "call_limit"))


def state_passes(check: Check, outcome: RunOutcome, timeout_ok: bool = False) -> bool:
    """A state passes when its run counts (`ran`) and the check holds on its trace."""
    return ran(outcome, timeout_ok) and check(outcome.trace)


def checks_of(truth: dict[str, Any]) -> list[Check]:
    """One trusted check per state: our plain-data specs, or an eval-only RoboEval checkout's own tests."""
    if truth.get("kind") == "roboeval":
        from .roboeval import judges

        return judges(truth)
    return [compile_check(spec) for spec in truth["checks"]]


def parts_of(truth: dict[str, Any]) -> list[list[Check]]:
    """Per state, the checks of its top-level conditions (the items of an "all"; else the whole check)."""
    if truth.get("kind") == "roboeval":
        return [[c] for c in checks_of(truth)]
    return [[compile_check(p) for p in (s[1:] if s[0] == "all" else [s])] for s in truth["checks"]]


def temporal_credit(parts: Sequence[Check], outcome: RunOutcome, timeout_ok: bool = False) -> float:
    """The fraction of a state's conditions that hold on its trace; 0 when the run does not count."""
    if not ran(outcome, timeout_ok) or not parts:
        return 0.0
    return sum(p(outcome.trace) for p in parts) / len(parts)


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
    floor = -w["penalty"]  # an unusable response earns the lowest penalty, never more than a wrong program
    if found.code is None:
        return Judgement(Verdict.invalid(found.problem, reward=floor, components={"penalty": -1.0}))
    tree = parse(found.code)
    if isinstance(tree, str):
        verdict = Verdict.invalid(f"the program does not parse: {tree}", reward=floor,
                                  components={"syntax": 0.0, "penalty": -1.0})  # fmt: skip
        return Judgement(verdict, found.code, found.offset, (tree,))
    truth = task.ground_truth
    states = [WorldState.from_json(s) for s in truth["states"]]
    checks, timeout_ok = checks_of(truth), truth.get("timeout_ok") or [False] * len(states)
    components = {"syntax": 1.0, "functional": 0.0, "temporal": 0.0, "executable": 0.0, "style": _style(found.code),
                  "security": _security(tree), "penalty": 0.0}  # fmt: skip
    broken = violations(tree)
    if broken:
        judgement = Judgement(Verdict(reward=0.0, passed=False), found.code, found.offset, tuple(broken))
        feedback = "the program breaks the robot-program rules: " + "; ".join(broken)
        return _with_penalties(judgement, w, components, False, feedback)
    seeds = robustness_seeds(task, robustness_runs)
    runs = [(s, None) for s in states] + [(states[k % len(states)], seed) for k, seed in enumerate(seeds)]
    outcomes = (executor or shared_executor()).run(found.code, runs)
    checked, robust = outcomes[: len(states)], outcomes[len(states) :]
    passes = [state_passes(c, o, t) for c, o, t in zip(checks, checked, timeout_ok, strict=True)]
    components["functional"] = sum(passes) / len(passes)
    parts = parts_of(truth)
    credit = [temporal_credit(p, o, t) for p, o, t in zip(parts, checked, timeout_ok, strict=True)]
    components["temporal"] = sum(credit) / len(credit)
    components["executable"] = sum(o.clean for o in robust) / len(robust) if robust else 1.0
    notes = [f"state {i + 1}: {_describe(o)}" for i, (o, ok) in enumerate(zip(checked, passes, strict=True)) if not ok]
    feedback = "all world states pass" if all(passes) else "; ".join(notes)
    judgement = Judgement(Verdict(reward=0.0, passed=False), found.code, found.offset, (), tuple(outcomes),
                          tuple(passes))  # fmt: skip
    return _with_penalties(judgement, w, components, all(passes), feedback)


def _with_penalties(judgement: Judgement, w: dict[str, float], components: dict[str, float], passed: bool,
                    feedback: str) -> Judgement:  # fmt: skip
    """The judgement with its final verdict: the token penalties of its evidence summed into `penalty`."""
    from .penalties import penalty_spans

    components["penalty"] = max(-1.0, sum(s.penalty for s in penalty_spans(judgement)))
    verdict = _combine(w, components, passed, feedback)
    return Judgement(verdict, judgement.code, judgement.offset, judgement.problems, judgement.outcomes,
                     judgement.passes)  # fmt: skip


def _combine(w: dict[str, float], components: dict[str, float], passed: bool, feedback: str) -> Verdict:
    gate = 1.0 if components["functional"] > 0 else 0.0
    scored = {k: v for k, v in w.items() if k != "penalty"}
    total = sum(v * (1.0 if k in UNGATED else gate) * components[k] for k, v in scored.items())
    reward = total / sum(scored.values()) + w["penalty"] * components["penalty"]
    return Verdict(reward=reward, passed=passed, components=components, feedback=feedback[:2000])


def wrong_answers(task: Task, rng: random.Random) -> list[list[str]]:
    """Mutated reference programs (wrong room, wrong order, missing step, hard-coded state) plus a robot misuse."""
    mutants = [f"```python\n{m}```" for m in task.ground_truth.get("mutants", [])]
    misuse = '```python\ndef task_program():\n    place("nothing")\n```'
    return [[m] for m in [*mutants, misuse]]
