"""The proposer-role env: validity reward from execution, copies of examples and broken programs score 0."""

from __future__ import annotations

import json

import pytest

from rlvr_gym.envs.geo.propose import GeoProposeEnv, judge_proposal


@pytest.fixture(scope="module")
def task():
    return GeoProposeEnv().get_task(0)


def test_reference_program_is_valid(task):
    assert judge_proposal(task.ground_truth, task.reference_actions[0]).reward == 1.0


def test_copied_example_scores_zero(task):
    copy = f"ANSWER: {json.dumps(task.ground_truth['examples'][0])}"
    verdict = judge_proposal(task.ground_truth, copy)
    assert verdict.reward == 0.0 and "copy" in verdict.feedback


@pytest.mark.parametrize(
    "answer,valid",
    [
        ('ANSWER: ["area", ["tile"]]', True),  # constant on every scene: well-formed but trivial
        ('ANSWER: ["objects", "tree"]', True),  # a set is not an answer
        ("ANSWER: " + "[" * 3000, False),
        ("no answer line", False),
    ],
)
def test_invalid_proposals_score_zero(task, answer, valid):
    verdict = judge_proposal(task.ground_truth, answer)
    assert verdict.reward == 0.0 and verdict.valid == valid


def test_env_step_gives_the_validity_reward(task):
    env = GeoProposeEnv()
    env.reset(seed=3)
    assert env.step_result(env.task.reference_actions[0]).reward == 1.0
