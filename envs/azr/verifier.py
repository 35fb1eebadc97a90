"""AZR verifiers: solve answers judged against ground truth, proposals validated by running them.

Solve (reward 1 right, 0 wrong, invalid when the asked block is missing, doubled or not a literal/program):
  deduction  the ```output literal must equal the true output exactly (`strict_equal`); nothing runs.
  abduction  the ```input arguments are run through the program in the sandbox; the value must equal the output.
  induction  the ```python program is vetted, then run on every input (shown and hidden) in the sandbox; all
             values must equal the true outputs (binary, as in the AZR scripts).
Propose (invalid when blocks are missing or doubled): valid when the program passes the static check, differs
  from the reference programs shown, every input is a literal argument list, and it runs in the sandbox's jail
  (deterministic by construction, `execution.py`) to an expressible value for every input (induction:
  `num_inputs` distinct inputs and a message); the outputs recorded for solvers are re-derived from the exact
  program text solvers see, in a fresh job, and must equal the first run's. The
  standalone env's tasks also name a target (`conditions.py`: signature, return type, a construct, output that
  depends on the input, checked on probe inputs too) and pay 1 only for a valid proposal on target, so no fixed
  program keeps its reward; the population computes learnability (`rewards.proposer_reward`) from
  `judge_proposals`'s report with its own solvers.
Every value is compared in this process on decoded plain data; the sandbox only ever computes `f(args)`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rlvr_gym.sandboxes.python_programs.plain_values import decode_tree
from rlvr_gym.types import Task, Verdict

from . import bank, conditions
from .blocks import fence, fenced_blocks
from .execution import AZRExecutor, same_calls, shared_executor
from .programs import args_text, check_program, expressible, literal_text, parse_args, parse_literal, strict_equal
from .tasks import proposal_text, truth_inputs, truth_outputs

MAX_MESSAGE_CHARS = 500


@dataclass
class ProposalReport:
    """Everything the population needs from one proposal."""

    task_type: str
    well_formed: bool = False
    valid: bool = False
    error: str | None = None
    program: str = ""
    inputs: list[tuple] = field(default_factory=list)
    outputs: list[Any] = field(default_factory=list)
    message: str = ""
    target: conditions.Target | None = None  # standalone tasks: what the proposal must be (`conditions.py`)
    target_error: str | None = None  # why a valid proposal misses its target

    @property
    def on_target(self) -> bool:
        return self.valid and (self.target is None or self.target_error is None)


def _executor(executor: AZRExecutor | None) -> AZRExecutor:
    return executor or shared_executor()


# ---- solve ------------------------------------------------------------------------------------------------------
def _solve_verdict(correct: bool, detail: str) -> Verdict:
    return Verdict(reward=float(correct), passed=correct, components={"correct": float(correct)},
                   feedback="Correct." if correct else f"Not correct: {detail}.")


def judge_solve(task: Task, text: str, *, executor: AZRExecutor | None = None) -> Verdict:
    truth = task.ground_truth
    kind = truth["task_type"]
    outputs = truth_outputs(truth)
    blocks = fenced_blocks(text)
    tag = {"deduction": "output", "abduction": "input", "induction": "python"}[kind]
    problem = blocks.problem(tag)
    if problem:
        return Verdict.invalid(problem)
    body = blocks.one(tag)
    if kind == "deduction":
        ok, value = parse_literal(body)
        if not ok:
            return Verdict.invalid(f"the output is {value}")
        return _solve_verdict(strict_equal(value, outputs[0]), "the predicted output differs")
    if kind == "abduction":
        ok, args = parse_args(body)
        if not ok:
            return Verdict.invalid(f"the input is invalid: {args}")
        run = _executor(executor).run(truth["program"], [args])
        right = run.all_ok and strict_equal(run.calls[0].value, outputs[0])
        return _solve_verdict(right, "the program does not return the output on this input")
    check = check_program(body)
    if not check.ok:
        return Verdict.invalid(check.error or "bad program")
    run = _executor(executor).run(body, truth_inputs(truth))
    right = run.all_ok and all(strict_equal(c.value, o) for c, o in zip(run.calls, outputs, strict=True))
    return _solve_verdict(right, "the program does not reproduce every input/output pair")


def solve_wrong_answers(task: Task, rng: random.Random) -> list[list[str]]:
    """Near misses: perturbed outputs, inputs of other outputs (seed programs), programs that wrap the answer."""
    truth = task.ground_truth
    kind = truth["task_type"]
    out = truth_outputs(truth)[0]
    if kind == "deduction":
        near = [[out], (out,), str(out), None]
        if isinstance(out, int) and not isinstance(out, bool):
            near += [out + 1, out - 1, float(out)]
        if isinstance(out, list) and out:
            near += [out[:-1], out[::-1], [*out, out[-1]]]
        texts = [fence("output", literal_text(v)) for v in near if not strict_equal(v, out)]
    elif kind == "abduction":
        seed = bank.BY_NAME.get(truth.get("seed_name") or "")
        texts = []
        for _ in range(30 if seed else 0):
            args = seed.make_input(rng)
            if not strict_equal(bank.output_of(seed.source, args), out):
                texts.append(fence("input", args_text(args)))
        texts = texts[:4]
    else:
        program = truth["program"].replace("def f(", "def _original(", 1)
        texts = [fence("python", f"{program}\n\ndef f(*args):\n    return [_original(*args)]"),
                 fence("python", "def f(*args):\n    return None")]
    return [[t] for t in texts]


# ---- propose ----------------------------------------------------------------------------------------------------
def _parse_proposal(task: Task, text: str, report: ProposalReport, num_inputs: int) -> str | None:
    """Fill the report's program/inputs/message from the text; returns why it is malformed, or None."""
    blocks = fenced_blocks(text)
    kind = report.task_type
    tags = ("python", "inputs", "message") if kind == "induction" else ("python", "input")
    problem = blocks.problem(*tags)
    if problem:
        return problem
    report.program = blocks.one("python")
    lines = blocks.one("inputs").split("\n") if kind == "induction" else [blocks.one("input")]
    lines = [line for line in lines if line.strip()]
    if kind == "induction" and len(lines) != num_inputs:
        return f"expected {num_inputs} input lines, found {len(lines)}"
    for line in lines:
        ok, args = parse_args(line)
        if not ok:
            return f"an input is invalid: {args}"
        report.inputs.append(args)
    if kind == "induction":
        report.message = blocks.one("message").strip()
        if not report.message or len(report.message) > MAX_MESSAGE_CHARS:
            return "the message must be one short non-empty hint"
    return None


def _semantic_problem(task: Task, report: ProposalReport) -> str | None:
    check = check_program(report.program)
    if not check.ok:
        return check.error
    references = [check_program(r["program"]).canonical for r in task.ground_truth["references"]]
    if check.canonical in references:
        return "the program repeats a reference example"
    if len({args_text(a) for a in report.inputs}) != len(report.inputs):
        return "the inputs are not distinct"
    return None


def _probes(task: Task) -> list[tuple]:
    return [tuple(decode_tree(t)) for t in task.ground_truth.get("probe_inputs", [])]


def judge_proposals(tasks: Sequence[Task], texts: Sequence[str], *, executor: AZRExecutor | None = None,
                    ) -> list[ProposalReport]:
    """Reports of many proposals. Every surviving program runs in one sandbox batch on its own inputs and, for
    targeted tasks, the task's probe inputs; the outputs recorded for solvers are then re-derived from the exact
    program text solvers will be shown, on its inputs alone, in a fresh job (`_rederive`)."""
    reports, pending = [], []
    for task, text in zip(tasks, texts, strict=True):
        report = ProposalReport(task.ground_truth["task_type"])
        if "target" in task.ground_truth:
            report.target = conditions.Target(**task.ground_truth["target"])
        num = int(task.metadata.get("num_inputs", 1)) if report.task_type == "induction" else 1
        report.error = _parse_proposal(task, text, report, num)
        report.well_formed = report.error is None
        if report.well_formed:
            report.error = _semantic_problem(task, report)
            if report.error is None:
                pending.append((report, _probes(task)))
        reports.append(report)
    runs = _executor(executor).run_many([(r.program, [*r.inputs, *probes]) for r, probes in pending])
    for (report, probes), run in zip(pending, runs, strict=True):
        own = len(report.inputs)
        calls, probe_calls = run.calls[:own], run.calls[own:]
        if not run.loaded or not calls or not all(c.ok for c in calls):
            failed = next((c.error for c in calls if not c.ok), None)
            report.error = run.error or failed or "the program failed"
        elif not all(expressible(c.value) for c in calls):
            report.error = "an output cannot be written as a Python literal"
        else:
            report.valid, report.outputs = True, [c.value for c in calls]
            if report.target is not None:
                report.target_error = _target_error(report, probe_calls, len(probes))
    _rederive([(report, run.calls[: len(report.inputs)]) for (report, _), run in zip(pending, runs, strict=True)
               if report.valid], executor)  # fmt: skip
    return reports


def _rederive(valid: Sequence[tuple[ProposalReport, Sequence[Any]]], executor: AZRExecutor | None) -> None:
    """Run each valid program again, exactly as solvers will be shown it, on its inputs only, in a fresh job; keep
    those outputs, and refuse the proposal when they differ from the first run's (a solver who computes the shown
    program correctly must be marked right)."""
    again = _executor(executor).run_many([(report.program, report.inputs) for report, _ in valid])
    for (report, first), run in zip(valid, again, strict=True):
        if not run.all_ok or not same_calls(first, run.calls):
            report.valid, report.outputs = False, []
            report.error = "the program does not compute the same outputs again (not deterministic)"
        else:
            report.outputs = [c.value for c in run.calls]


def _target_error(report: ProposalReport, probe_calls: Sequence[Any], probes: int) -> str | None:
    assert report.target is not None
    if len(probe_calls) != probes or not all(c.ok for c in probe_calls):
        return f"the program fails on other inputs of the signature {report.target.args}"
    outputs = [*report.outputs, *(c.value for c in probe_calls)]
    return conditions.target_problem(report.target, report.program, report.inputs, outputs)


def proposal_verdict(report: ProposalReport) -> Verdict:
    """Untargeted: 1 for a valid proposal. Targeted (the standalone env): 1 only when it also meets its target."""
    if not report.well_formed:
        return Verdict.invalid(report.error or "malformed proposal", components={"valid": 0.0})
    components = {"valid": float(report.valid)}
    if report.target is not None:
        components["on_target"] = float(report.on_target)
    if not report.valid:
        feedback = f"Invalid proposal: {report.error}."
    elif not report.on_target:
        feedback = f"A valid proposal that misses its target: {report.target_error}."
    else:
        feedback = "A valid proposal." if report.target is None else "A valid proposal on target."
    ok = report.on_target
    return Verdict(reward=float(ok), passed=ok, components=components, feedback=feedback)


def propose_wrong_answers(task: Task, rng: random.Random) -> list[list[str]]:
    """A copied reference, a banned import, a syntax error, a nondeterministic program; with a target, also the
    oracle's program made constant and one returning another type."""
    truth = task.ground_truth
    kind = truth["task_type"]
    ref = truth["references"][0]
    oracle = bank.BY_NAME[truth["oracle"]]
    source = truth.get("oracle_program", oracle.source)
    inputs = [tuple(decode_tree(t)) for t in truth["oracle_inputs"]]
    ref_inputs = [tuple(decode_tree(ref["input"]))] * len(inputs)
    message = truth.get("oracle_message", oracle.message) if kind == "induction" else ""
    variants = [
        (ref["program"], ref_inputs if kind != "induction" else inputs),
        ("import random\n" + source, inputs),
        (source.replace(":", "", 1), inputs),
        ("import time\n" + source.replace("return ", "return time.time(), ", 1), inputs),
    ]
    if "target" in truth:
        header = source.split("\n", 1)[0]
        constant = literal_text(bank.output_of(source, inputs[0]))  # our own synthesised program
        variants += [(f"{header}\n    return {constant}", inputs), (source.replace("return ", "return str(", 1) + ")"
                     if truth["target"]["returns"] != "str" else source.replace("return ", "return len(", 1) + ")",
                     inputs)]
    return [[proposal_text(kind, program, ins, message)] for program, ins in variants]


# ---- the one verify ---------------------------------------------------------------------------------------------
def verify(task: Task | dict, trajectory: Sequence[str], *, executor: AZRExecutor | None = None) -> Verdict:
    task = task if isinstance(task, Task) else Task.model_validate(task)
    if not trajectory:
        return Verdict.invalid("no answer")
    if task.metadata.get("role") == "propose":
        return proposal_verdict(judge_proposals([task], [trajectory[0]], executor=executor)[0])
    return judge_solve(task, trajectory[0], executor=executor)


def wrong_answers(task: Task, rng: random.Random) -> list[list[str]]:
    if task.metadata.get("role") == "propose":
        return propose_wrong_answers(task, rng)
    return solve_wrong_answers(task, rng)
