"""AZR's task buffer: grows with valid proposals, deduplicates, stays bounded, feeds propose and solve prompts."""

from __future__ import annotations

import random

from rlvr_gym.envs.azr.buffer import TaskBuffer
from rlvr_gym.envs.azr.tasks import proposal_text
from rlvr_gym.envs.azr.verifier import judge_proposals, judge_solve


def _program(k: int) -> str:
    return f"def f(x):\n    return x * {k} + 1"


def test_grows_with_new_proposals_and_refuses_duplicates():
    buffer = TaskBuffer(("deduction",), capacity=10)
    seeds = len(buffer)
    assert seeds == 14 and not buffer.proposals("deduction")
    assert buffer.add("deduction", _program(2), [(3,)], [7])
    assert not buffer.add("deduction", "def f(x):\n    # same, other layout\n    return x*2 + 1", [(3,)], [7])
    assert buffer.add("deduction", _program(2), [(4,)], [9])  # same program, another input: another task
    assert len(buffer) == seeds + 2 and buffer.added == 2


def test_bounded_oldest_proposal_dropped_seeds_kept():
    buffer = TaskBuffer(("deduction",), capacity=3)
    for k in range(5):
        buffer.add("deduction", _program(k + 2), [(1,)], [k + 3])
    kept = [e.program for e in buffer.proposals("deduction")]
    assert kept == [_program(k + 2) for k in (2, 3, 4)]
    assert len(buffer) == 14 + 3
    assert buffer.add("deduction", _program(2), [(1,)], [3])  # evicted, so new again


def test_propose_prompts_draw_references_from_the_buffer_and_judge_against_them():
    buffer = TaskBuffer(("deduction",), capacity=50)
    for k in range(40):  # proposals now outnumber the seeds, so references come mostly from them
        buffer.add("deduction", _program(k + 2), [(k,)], [k * (k + 2) + 1])
    rng = random.Random(0)
    tasks = [buffer.propose_task("deduction", rng, i, 4) for i in range(10)]
    shown = [r["program"] for t in tasks for r in t.ground_truth["references"]]
    assert any(p.startswith("def f(x):\n    return x * ") for p in shown)
    assert all(p in t.prompt for t in tasks for p in (r["program"] for r in t.ground_truth["references"]))
    copy = next(t for t in tasks if t.ground_truth["references"][0]["program"].startswith("def f(x):\n    return x"))
    ref = copy.ground_truth["references"][0]["program"]
    reports = judge_proposals(
        [copy, copy],
        [proposal_text("deduction", ref, [(1,)]), proposal_text("deduction", "def f(x):\n    return -x", [(5,)])],
    )
    assert not reports[0].valid and "reference" in (reports[0].error or "")
    assert reports[1].valid and reports[1].outputs == [-5]


def test_solve_tasks_from_entries_are_judged_on_their_outputs_and_state_round_trips():
    buffer = TaskBuffer(("deduction", "induction"), seed=3)
    buffer.add("deduction", _program(5), [(2,)], [11])
    entry = buffer.proposals("deduction")[0]
    task = buffer.solve_task("deduction", random.Random(0), 7, entry)
    assert judge_solve(task, "```output\n11\n```").passed and not judge_solve(task, "```output\n12\n```").passed
    induction = buffer.solve_task("induction", random.Random(0), 8)
    assert len(induction.ground_truth["inputs"]) == 6 and induction.ground_truth["visible"] == 3
    again = TaskBuffer(("deduction", "induction"), seed=3)
    assert again.state() != buffer.state()
    again.load(buffer.state())
    assert again.state() == buffer.state() and not again.add("deduction", _program(5), [(2,)], [11])
