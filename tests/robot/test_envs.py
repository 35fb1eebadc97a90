"""Both robot envs through the registry: the program env and the call-per-turn env."""

import random

import rlvr_gym
from rlvr_gym.envs.robot.interactive import parse_call


def test_interactive_episode_sees_results_and_repairs():
    env = rlvr_gym.make("rlvr/RobotInteractive-v0")
    env.reset(options={"task_index": 4})
    task = env.task
    obs, reward, done, _, info = env.step('go_to("the moon")')
    assert "error" in obs[0]["content"] and not done and info["valid_action"]
    obs, reward, done, _, info = env.step("import os")
    assert not info["valid_action"] and not done
    for action in task.reference_actions:
        obs, reward, done, _, info = env.step(action)
    assert done and reward == 1.0 and info["verdict"].passed
    for wrong in env.wrong_answers(task, random.Random(0)):
        assert not env.verify(task, wrong).passed


def test_parse_call_is_bounded_and_literal_only():
    assert parse_call('ask("Ana", "ok?", ["yes", "no"])') == ("ask", ("Ana", "ok?", ["yes", "no"]))
    assert parse_call("```python\nsay('hi')\n```") == ("say", ("hi",))
    assert isinstance(parse_call("say(open('x').read())"), str)
    assert isinstance(parse_call("(" * 100_000), str)
    assert isinstance(parse_call("go_to()"), str)


def test_program_env_registered_and_scores_reference():
    env = rlvr_gym.make("rlvr/RobotProgram-v0", kinds=["event_ordering"])
    env.reset(seed=1)
    _, reward, done, _, info = env.step(env.task.reference_actions[0])
    assert done and reward == 1.0 and info["verdict"].components["functional"] == 1.0


def test_interactive_episode_is_judged_over_every_world_state():
    # Before #34 only the first world state was played and judged; now each state in turn, done() after each.
    env = rlvr_gym.make("rlvr/RobotInteractive-v0")
    env.reset(options={"task_index": 4})
    task = env.task
    calls = task.reference_actions
    assert calls.count("done()") == len(task.ground_truth["states"]) >= 2
    first = calls[: calls.index("done()") + 1]
    partial = env.verify(task, first)  # the turn limit (here: the end of the actions) judges what was done
    assert not partial.passed and 0 < partial.reward < 1
    _, reward, done, _, info = env.step(first[0])
    assert not done
    full = env.verify(task, calls)
    assert full.passed and full.reward == 1.0
