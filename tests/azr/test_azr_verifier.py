"""AZR verifiers on real sandbox runs: solve verdicts, proposal validity, determinism, forged answers."""

from __future__ import annotations

import random

import pytest

from rlvr_gym.envs.azr import bank
from rlvr_gym.envs.azr.blocks import fence
from rlvr_gym.envs.azr.programs import check_program
from rlvr_gym.envs.azr.tasks import AZRProposeTasks, AZRSolveTasks, proposal_text, truth_outputs
from rlvr_gym.envs.azr.verifier import judge_proposals, verify, wrong_answers


@pytest.fixture(scope="module")
def solve_tasks():
    source = AZRSolveTasks(seed=0)
    return {t.ground_truth["task_type"]: t for t in (source.task(i) for i in range(3))}


@pytest.fixture(scope="module")
def propose_task():
    return AZRProposeTasks(seed=0, task_types="deduction").task(0)


@pytest.mark.parametrize("kind", ["deduction", "abduction", "induction"])
def test_reference_answer_is_right_and_near_misses_are_wrong(solve_tasks, azr_executor, kind):
    task = solve_tasks[kind]
    right = verify(task, task.reference_actions, executor=azr_executor)
    assert right.passed and right.reward == 1.0
    wrongs = wrong_answers(task, random.Random(0))
    assert wrongs
    for answer in wrongs:
        verdict = verify(task, answer, executor=azr_executor)
        assert not verdict.passed and verdict.reward == 0.0


def test_deduction_answer_must_match_type_exactly(solve_tasks, azr_executor):
    task = solve_tasks["deduction"]
    out = truth_outputs(task.ground_truth)[0]
    assert not verify(task, [fence("output", repr(str(out)))], executor=azr_executor).passed


def test_doubled_blocks_are_invalid_not_first_wins(solve_tasks, azr_executor):
    task = solve_tasks["deduction"]
    ref = task.reference_actions[0]
    forged = ref + "\n" + fence("output", "0")
    verdict = verify(task, [forged], executor=azr_executor)
    assert not verdict.passed and verdict.reward == 0.0


def test_induction_program_cannot_escape_to_forge_the_verdict(solve_tasks, azr_executor):
    task = solve_tasks["induction"]
    attacks = [
        "import os\ndef f(*a):\n    os._exit(0)",
        "def f(*a):\n    return ().__class__.__mro__",
        "def f(*a):\n    return eval('1')",
        "class Any:\n    def __eq__(self, o):\n        return True\ndef f(*a):\n    return Any()",
        "import sys\ndef f(*a):\n    sys.stdout.write('{\"value\": 1}\\n')",
    ]
    for program in attacks:
        verdict = verify(task, [fence("python", program)], executor=azr_executor)
        assert not verdict.passed, program


def test_static_check_bans_imports_and_escape_routes():
    assert check_program("import math\ndef f(x):\n    return math.sqrt(x)").ok
    for bad in [
        "import random\ndef f(x):\n    return random.random()",
        "import time\ndef f(x):\n    return x",
        "from os import path\ndef f(x):\n    return x",
        "def f(x):\n    return id(x)",
        "def f(x):\n    return x.__class__",
        "def f(x):\n    yield x",
        "def g(x):\n    return x",
        "def f(x):\n    return open('/etc/passwd').read()",
        "def f(x) return x",
    ]:
        assert not check_program(bad).ok, bad


def test_valid_proposal_and_every_standard_violation(propose_task, azr_executor):
    oracle = verify(propose_task, propose_task.reference_actions, executor=azr_executor)
    assert oracle.passed
    for answer in wrong_answers(propose_task, random.Random(0)):
        assert not verify(propose_task, answer, executor=azr_executor).passed


def test_an_address_reading_program_computes_the_same_everywhere(propose_task, azr_executor):
    # The repr of a fresh object showed its address, which differs between processes; the jail prints none, so the
    # program is deterministic by construction and its recorded output is what every solver can compute.
    program = "def f(n):\n    class C:\n        pass\n    return repr(C())[-n:]"
    assert check_program(program).ok
    [report] = judge_proposals([propose_task], [proposal_text("deduction", program, [(4,)])], executor=azr_executor)
    assert report.valid and report.outputs == ["ect>"]


def test_seed_programs_agree_with_the_sandbox(azr_executor):
    rng = random.Random(1)
    jobs = [(s.source, [s.make_input(rng)]) for s in bank.SEEDS]
    for (source, inputs), run in zip(jobs, azr_executor.run_many(jobs), strict=True):
        assert run.all_ok
        assert run.calls[0].value == bank.output_of(source, inputs[0])


def test_garbage_answers_are_typed_invalid(solve_tasks, azr_executor):
    task = solve_tasks["abduction"]
    for text in ["", "\x00" * 1000, "\ud800", "`" * 100_000, "\n" * 200_000, fence("input", "[" * 5000)]:
        verdict = verify(task, [text], executor=azr_executor)
        assert not verdict.passed
