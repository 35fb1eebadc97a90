"""A fixed program cannot keep the standalone proposer's reward (issue #42): every task names a target."""

from __future__ import annotations

import json
import random

from rlvr_gym.envs.geo.propose import FIXED_PROGRAMS, GeoProposeEnv, judge_proposal, target_problem


def test_fixed_programs_earn_nothing_and_each_oracle_meets_its_target():
    env = GeoProposeEnv()
    tasks = [env.get_task(i) for i in range(12)]
    for task in tasks:
        assert judge_proposal(task.ground_truth, task.reference_actions[0]).reward == 1.0
        for name, program in FIXED_PROGRAMS.items():
            verdict = judge_proposal(task.ground_truth, f"ANSWER: {json.dumps(program)}")
            assert verdict.reward == 0.0, (name, task.ground_truth["target"])
    assert len({json.dumps(t.ground_truth["target"], sort_keys=True) for t in tasks}) >= 8


def test_a_valid_program_off_target_is_told_why():
    env = GeoProposeEnv()
    verdicts = [
        judge_proposal(env.get_task(i).ground_truth, 'ANSWER: ["count", ["objects", "tree"]]') for i in range(6)
    ]
    off_target = [v for v in verdicts if v.components["valid"] == 1.0]
    assert off_target and all(v.reward == 0.0 and "misses the target" in v.feedback for v in off_target)
    target = {"top": "count", "classes": ["tree"], "uses": "within"}
    assert target_problem(target, ["count", ["within", ["objects", "tree"], "NE"]]) is None
    assert "does not use" in target_problem(target, ["count", ["objects", "tree"]])
    assert target_problem(target, ["count", ["within", ["objects", "building"], "NE"]]) is not None


def test_the_floor_hook_offers_fixed_programs_and_a_copy():
    env = GeoProposeEnv()
    task = env.get_task(1)
    policies = env.floor_policies(task, random.Random(0))
    assert set(policies) >= {"count_trees", "copy_example"}
    assert all(env.verify(task, trajectory).reward == 0.0 for trajectory in policies.values())
