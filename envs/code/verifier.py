"""The code verifier: `verify(task, trajectory) -> Verdict` and the wrong-answer generator `wrong_answers`.

Static analysis runs here, the candidate's calls run in the sandbox, the hidden tests run here on the values
that came back (`judge.py`), and a weighted rubric combines the components.

Components (all in [0, 1] except `outcome`):
  syntax      1 if the assembled program parses (`ast.parse`).
  tests       fraction of hidden test cases that passed when the tests ran in this (trusted) process on the
              plain-data values the sandbox computed for the candidate's calls (`judge.py`); never an exit code.
  executable  1 if the candidate module loaded, every sandbox job ran to its end, and no case or setup raised
              anything other than AssertionError (runtime errors, timeouts and non-data values make it 0).
  style       max(0, 1 - style_findings / style_cap) over findings on the agent's own lines (ruff E/W/F).
  security    max(0, 1 - security_findings / security_cap) (AST visitor, bandit-like rules).
  outcome     PPOCoder-style scalar: -1 syntax error, -0.6 runtime error, -0.3 failed test, +1 all tests pass.

The weights (syntax 0.1, tests 0.6, executable 0.1, style 0.1, security 0.1, outcome 0 = metric only) and the
caps (style 10, security 3) are design choices: the execution-aware code-RL paper (arXiv 2605.21180) names the
components but publishes no numbers (design choice, see docs/code-env.md). Code that does not parse is an invalid
response with 0 on every component. Every other reward is `earned` x the rubric with `tests` at 1, where `earned`
is 1 on a full pass and otherwise the share of the cases no trivial program (constant, None, identity) passes that
this one passes (`trivial.py`): neither garbage, nor a stub, nor a constant body ever collects test, style or
security reward. `passed` means all tests passed.
The verdict is a pure function of (task, code) given a working sandbox: findings are cached by program text,
and the only nondeterminism left is a candidate whose own behaviour depends on time or randomness.
"""

from __future__ import annotations

import ast
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rlvr_gym.rubric import Criterion, Rubric
from rlvr_gym.sandboxes.python_programs.findings import Finding
from rlvr_gym.sandboxes.python_programs.security import security_findings
from rlvr_gym.sandboxes.python_programs.style import style_findings_many
from rlvr_gym.types import InfraError, Task, Verdict

from .actions import ParsedAction, format_submission, parse_action
from .execution import CodeExecutor, shared_executor
from .harness import TestRun
from .mutants import mutants
from .program import Program, assemble
from .spec import CodeSpec, spec_of
from .testsuite import TestPlan, build_plan
from .trivial import beyond_trivial

DEFAULT_WEIGHTS: dict[str, float] = {
    "syntax": 0.1,
    "tests": 0.6,
    "executable": 0.1,
    "style": 0.1,
    "security": 0.1,
    "outcome": 0.0,
}
STYLE_CAP = 10
SECURITY_CAP = 3
OUTCOME = {"syntax_error": -1.0, "runtime_error": -0.6, "failed_test": -0.3, "pass": 1.0}


@dataclass
class CodeReport:
    """All evidence behind one verdict; findings carry *program* line numbers."""

    program: Program
    entry_point: str
    syntax_ok: bool
    findings: list[Finding] = field(default_factory=list)
    style_tool: str = ""
    test_run: TestRun | None = None
    plan: TestPlan | None = None  # the tests' judging plan (the trivial baseline is measured on it)
    components: dict[str, float] = field(default_factory=dict)
    error: str | None = None

    def of_kind(self, kind: str) -> list[Finding]:
        return [f for f in self.findings if f.kind == kind]

    def in_code(self, findings: Sequence[Finding]) -> list[Finding]:
        return [f for f in findings if self.program.code_line(f.line) is not None]


def _syntax_finding(program: Program) -> tuple[ast.Module | None, Finding | None]:
    try:
        return ast.parse(program.source), None
    except SyntaxError as exc:
        return None, Finding("syntax", "E999", f"{type(exc).__name__}: {exc.msg}", exc.lineno, (exc.offset or 1) - 1)
    except (ValueError, RecursionError, MemoryError) as exc:  # NUL bytes, absurd nesting
        return None, Finding("syntax", "E999", f"{type(exc).__name__}: {exc}", None)


def _runtime_findings(run: TestRun) -> list[Finding]:
    """One finding per distinct (error, line) and one for all failed asserts, so penalties do not pile up."""
    found: list[Finding] = []
    if run.load_error is not None:
        found.append(Finding("runtime", "load", run.load_error, run.load_line))
    errors: dict[tuple[str, int | None], list[int]] = {}
    failed = [c.index for c in run.cases if not c.passed and c.error in (None, "AssertionError", "NoResult")]
    for case in run.cases:
        if not case.passed and case.index not in failed:
            errors.setdefault((case.error or "error", case.line), []).append(case.index)
    for (error, line), indices in errors.items():
        first = next(c for c in run.cases if c.index == indices[0])
        found.append(Finding("runtime", error, f"{len(indices)} test(s): {first.message}", line))
    if failed:
        found.append(Finding("test", "failed", f"{len(failed)} of {len(run.cases)} tests failed", None))
    return found


def _outcome(report: CodeReport) -> float:
    run = report.test_run
    if not report.syntax_ok:
        return OUTCOME["syntax_error"]
    if run is not None and run.cases and run.passed_count == len(run.cases):
        return OUTCOME["pass"]
    if run is None or not run.loaded or run.runtime_errors or run.setup_errors:
        return OUTCOME["runtime_error"]
    return OUTCOME["failed_test"]


def _components(report: CodeReport) -> dict[str, float]:
    """Component values; before the tests ran (`test_run` None) tests and executable are 0."""
    if not report.syntax_ok:
        return {name: 0.0 for name in DEFAULT_WEIGHTS} | {"outcome": OUTCOME["syntax_error"]}
    run = report.test_run
    executable = run is not None and run.loaded and run.finished and not run.runtime_errors and not run.setup_errors
    style = len(report.in_code(report.of_kind("style")))
    security = len(report.in_code(report.of_kind("security")))
    return {
        "syntax": 1.0,
        "tests": run.fraction if run is not None else 0.0,
        "executable": float(executable),
        "style": max(0.0, 1.0 - style / STYLE_CAP),
        "security": max(0.0, 1.0 - security / SECURITY_CAP),
        "outcome": _outcome(report),
    }


def analyse_many(specs: Sequence[CodeSpec], codes: Sequence[str]) -> list[CodeReport]:
    """Static half of the verifier (nothing is executed): program assembly, syntax, style, security."""
    reports = []
    for spec, code in zip(specs, codes, strict=True):
        program = assemble(spec.preamble, code)
        report = CodeReport(program=program, entry_point=spec.entry_point, syntax_ok=False)
        tree, syntax = _syntax_finding(program)
        report.syntax_ok = tree is not None
        report.findings = security_findings(tree) if tree is not None else [syntax] if syntax else []
        reports.append(report)
    parsed = [r for r in reports if r.syntax_ok]
    for report, (style, tool) in zip(parsed, style_findings_many([r.program.source for r in parsed]), strict=True):
        report.findings = style + report.findings
        report.style_tool = tool
    for report in reports:
        report.components = _components(report)
    return reports


def _finish(report: CodeReport, run: TestRun | None) -> CodeReport:
    report.test_run = run
    if run is not None:
        report.findings = report.findings + _runtime_findings(run)
        report.error = run.sandbox_error
    report.components = _components(report)
    return report


def evaluate_code(task: Task, code: str, *, executor: CodeExecutor | None = None) -> CodeReport:
    """Full evidence for one solution."""
    return evaluate_many([task], [code], executor=executor)[0]


def evaluate_many(
    tasks: Sequence[Task], codes: Sequence[str], *, executor: CodeExecutor | None = None
) -> list[CodeReport]:
    """Evaluate many solutions, running their test jobs concurrently in the sandbox."""
    if len(tasks) != len(codes):
        raise ValueError("tasks and codes differ in length")
    executor = executor or shared_executor()
    specs = [spec_of(task) for task in tasks]
    reports = analyse_many(specs, codes)
    pending = [i for i, report in enumerate(reports) if report.syntax_ok]
    for i in pending:
        reports[i].plan = build_plan(specs[i])
    runs = executor.run_tests_many([(reports[i].program, reports[i].plan) for i in pending])
    by_index = dict(zip(pending, runs, strict=True))
    return [_finish(report, by_index.get(i)) for i, report in enumerate(reports)]


def code_rubric(weights: Mapping[str, float] | None = None) -> Rubric:
    """The code rubric; `weights` overrides any subset of DEFAULT_WEIGHTS (weight 0 = metric only)."""
    criteria = [
        Criterion(name, (lambda report, _n=name: report.components[_n]), weight)
        for name, weight in DEFAULT_WEIGHTS.items()
    ]
    rubric = Rubric(criteria, pass_on="tests", pass_threshold=1.0)
    return rubric.with_weights(weights) if weights else rubric


def summarize(report: CodeReport) -> str:
    """Short human-readable feedback for the agent/logs."""
    if not report.syntax_ok:
        first = report.findings[0] if report.findings else None
        where = f" (line {report.program.code_line(first.line)})" if first and first.line else ""
        return f"The code does not parse{where}: {first.message if first else 'syntax error'}."
    run = report.test_run
    parts = []
    if run is not None:
        parts.append(f"tests passed: {run.passed_count}/{len(run.cases)}")
        if run.load_error:
            parts.append(f"loading the code failed: {run.load_error}")
        elif not run.finished:
            parts.append(f"the test run did not finish (status {run.status})")
        errors = sorted({c.error for c in run.runtime_errors if c.error})
        if errors:
            parts.append("runtime errors: " + ", ".join(errors))
    style = report.in_code(report.of_kind("style"))
    security = report.in_code(report.of_kind("security"))
    if style:
        parts.append(f"{len(style)} style finding(s)")
    if security:
        parts.append("security: " + "; ".join(f"{f.rule} {f.message}" for f in security[:3]))
    if report.error:
        parts.append(f"sandbox error: {report.error}")
    return "; ".join(parts) + "."


def earned_share(report: CodeReport) -> float:
    """Share of the cases no trivial program passes that this program passes (`trivial.py`); 1 on a full pass.

    A full pass needs no baseline (and the oracle never pays for one); anything less is measured against the
    cases a constant, `None` or an identity body passes on the same tests, so those cases earn nothing.
    """
    run = report.test_run
    if run is None or not run.cases:
        return 0.0
    if run.passed_count == len(run.cases):
        return 1.0
    if report.plan is None or run.passed_count == 0:
        return 0.0
    return beyond_trivial(report.plan, {case.index for case in run.cases if case.passed})


def verdict_of(report: CodeReport, rubric: Rubric | None = None) -> Verdict:
    """The verdict of one report: invalid when the program does not parse, else the rubric scaled by `earned`.

    reward = earned x (the rubric with `tests` at 1): every component (syntax, executable, style, security) pays
    only in proportion to the tests passed beyond what trivial programs pass, so neither garbage, nor a stub,
    nor a constant body (`return True`) collects anything. `tests` stays the raw pass fraction and `earned` is
    shown beside it. A sandbox that could not run the tests is an infrastructure failure (`InfraError`).
    """
    if report.error:
        raise InfraError(f"code sandbox failed: {report.error}")
    rubric = rubric or code_rubric()
    verdict = rubric.combine(report.components, feedback=summarize(report))
    if not report.syntax_ok:
        return Verdict.invalid("the program does not parse", components=verdict.components, feedback=verdict.feedback)
    earned = earned_share(report)
    reward = earned * rubric.combine({**report.components, "tests": 1.0}).reward if earned > 0.0 else 0.0
    components = {**verdict.components, "earned": earned}
    return verdict.model_copy(update={"reward": reward, "components": components})


def judge_submission(
    task: Task, code: str, *, rubric: Rubric | None = None, executor: CodeExecutor | None = None
) -> tuple[Verdict, CodeReport]:
    """Verdict and full evidence (for token-level penalties) of one submitted program."""
    report = evaluate_code(task, code, executor=executor)
    return verdict_of(report, rubric), report


def first_submission(trajectory: Sequence[str], max_turns: int | None = None) -> ParsedAction | None:
    """The first action of the trajectory that submits code (runs and invalid actions are skipped)."""
    for action in list(trajectory)[:max_turns]:
        parsed = parse_action(action)
        if parsed.kind == "submit" and parsed.has_code:
            return parsed
    return None


def verify(
    task: Task | dict,
    trajectory: Sequence[str],
    *,
    rubric: Rubric | None = None,
    executor: CodeExecutor | None = None,
    max_turns: int | None = None,
) -> Verdict:
    """The family's verifier: the first submission within `max_turns` actions decides; none is invalid."""
    task = task if isinstance(task, Task) else Task.model_validate(task)
    parsed = first_submission(trajectory, max_turns)
    if parsed is None:
        return Verdict.invalid("no code was submitted")
    return judge_submission(task, parsed.code, rubric=rubric, executor=executor)[0]


def wrong_answers(task: Task, rng: random.Random) -> list[list[str]]:
    """Mutants of the reference solution that change every returned value (see `mutants.py`)."""
    spec = spec_of(task)
    if not spec.reference_solution:
        return []
    made = mutants(spec.preamble, spec.reference_solution, spec.entry_point, rng)
    return [[format_submission(source)] for source in made.values()]


def score_many(
    tasks: Sequence[Task], codes: Sequence[str], *, rubric: Rubric | None = None, executor: CodeExecutor | None = None
) -> list[Verdict]:
    """Verdicts of many programs, their sandbox jobs run concurrently."""
    return [verdict_of(r, rubric) for r in evaluate_many(tasks, codes, executor=executor)]
