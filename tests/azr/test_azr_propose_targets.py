"""The standalone proposer env pays only a valid proposal on its task's target (issue #42)."""

from __future__ import annotations

import random

import pytest

from rlvr_gym.envs.azr import conditions, floor
from rlvr_gym.envs.azr.tasks import AZRProposeTasks, proposal_text
from rlvr_gym.envs.azr.verifier import judge_proposals, proposal_verdict, verify


@pytest.fixture(scope="module")
def targeted():
    return [AZRProposeTasks(targets=True).task(i) for i in range(6)]


def test_oracles_meet_their_targets_and_fixed_programs_earn_nothing(targeted, azr_executor):
    for task in targeted:
        assert verify(task, task.reference_actions, executor=azr_executor).reward == 1.0
        for name, trajectory in floor.floor_policies(task).items():
            verdict = verify(task, trajectory, executor=azr_executor)
            assert verdict.reward == 0.0, (name, task.ground_truth["target"], verdict.feedback)


def test_a_valid_proposal_off_target_is_valid_but_unpaid(targeted, azr_executor):
    task = next(t for t in targeted if t.ground_truth["task_type"] != "induction")
    report = judge_proposals(
        [task],
        [proposal_text(task.ground_truth["task_type"], "def f(x):\n    return x + 1", [(3,)])],
        executor=azr_executor,
    )[0]
    verdict = proposal_verdict(report)
    assert report.valid and not report.on_target and verdict.reward == 0.0
    assert verdict.components == {"valid": 1.0, "on_target": 0.0} and "target" in verdict.feedback


def test_a_constant_program_of_the_right_signature_misses_the_target():
    target = conditions.Target("int", "int", "modulo")
    assert "depend on" in conditions.target_problem(target, "def f(n):\n    return n % 1", [(1,), (2,)], [0, 0])
    assert "does not use" in conditions.target_problem(target, "def f(n):\n    return n + 1", [(1,)], [2, 3])
    assert "a str" in conditions.target_problem(target, "def f(n):\n    return str(n % 3)", [(1,)], ["1", "2"])
    assert conditions.target_problem(target, "def f(n):\n    return n % 3", [(1,)], [1, 2]) is None


def test_targets_spread_over_many_signatures():
    rng = random.Random(0)
    drawn = {conditions.draw_target(rng, 1)[0] for _ in range(60)}
    assert len({(t.args, t.returns) for t in drawn}) >= 25


def test_the_population_tasks_keep_the_validity_reward(azr_executor):
    task = AZRProposeTasks().task(0)
    assert "target" not in task.ground_truth and "Target" not in task.prompt
    fixed = floor.floor_policies(task)["x_plus_one"]
    assert verify(task, fixed, executor=azr_executor).components == {"valid": 1.0}
