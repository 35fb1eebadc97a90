"""Generated tasks: references pass every state, mutants fail one, splits are disjoint, tasks are plain data."""

import builtins
import itertools
import json
import types

import pytest

from rlvr_gym.envs.robot import vocab
from rlvr_gym.envs.robot.checkspec import holds
from rlvr_gym.envs.robot.constraint_kinds import KINDS
from rlvr_gym.envs.robot.program import extract
from rlvr_gym.envs.robot.replay import API
from rlvr_gym.envs.robot.simulator import RobotError, WorldState, make_robot
from rlvr_gym.envs.robot.tasks import RobotTasks


class CallLimit(Exception):
    pass


def run_trusted(program: str, state: WorldState, limit: int = 300):
    """Run one of OUR generated programs in-process (test only; candidates always go through the sandbox): at most
    `limit` robot calls (a waiting loop ends there, as at the sandbox's call limit), `time.sleep` does not sleep."""
    robot = make_robot(state)

    def bounded(name):
        def call(*args):
            if len(robot.trace) >= limit:
                raise CallLimit
            return getattr(robot, name)(*args)

        return call

    clock = types.SimpleNamespace(sleep=lambda s: None, time=lambda: 0.0)
    imports = {"time": clock}
    namespace = {name: bounded(name) for name in API}
    namespace["__builtins__"] = {**vars(builtins), "__import__": lambda name, *a: imports.get(name) or __import__(name)}
    exec(compile(program, "<generated>", "exec"), namespace)
    try:
        namespace["task_program"]()
    except RobotError:
        return robot.trace, "error"
    except CallLimit:
        return robot.trace, "call_limit"
    return robot.trace, "ok"


def passes_all(program: str, truth: dict) -> bool:
    results = []
    allowed = truth.get("timeout_ok") or [False] * len(truth["states"])
    for state, check, timeout_ok in zip(truth["states"], truth["checks"], allowed, strict=True):
        trace, end = run_trusted(program, WorldState.from_json(state))
        results.append((end == "ok" or (timeout_ok and end == "call_limit")) and holds(check, trace))
    return all(results)


def test_names_never_match_each_other():
    for names in (vocab.ROOMS, vocab.OBJECTS, vocab.PEOPLE):
        for a, b in itertools.permutations(names, 2):
            assert a.lower() not in b.lower(), (a, b)


@pytest.mark.parametrize("split", ["train", "eval"])
def test_references_pass_and_mutants_fail(split):
    source = RobotTasks(split=split)
    kinds = set()
    for index in range(60):
        task = source.task(index)
        truth = task.ground_truth
        kinds.add(truth["kind"])
        assert passes_all(extract(task.reference_actions[0]).code, truth), task.id
        for mutant in truth["mutants"]:
            assert not passes_all(mutant, truth), (task.id, mutant)
        assert 1 <= task.metadata["difficulty"] <= 5 and len(truth["states"]) >= 2
        assert all(len(line) <= 100 for line in task.reference_actions[0].splitlines())  # lint-clean references
    assert kinds == set(KINDS)


def test_tasks_are_deterministic_plain_data_and_hide_answers():
    a, b = RobotTasks(seed=3).task(11), RobotTasks(seed=3).task(11)
    assert a == b and a.id == "robot/train/11"
    json.dumps(a.model_dump())
    public = json.dumps(a.view().model_dump())
    assert '"checks"' not in public and '"mutants"' not in public
    assert extract(a.reference_actions[0]).code.strip() not in public


def test_splits_are_disjoint_and_kinds_filter():
    train = {RobotTasks(split="train").task(i).prompt for i in range(150)}
    evals = {RobotTasks(split="eval").task(i).prompt for i in range(150)}
    assert not train & evals and len(train) == 150 and len(evals) == 150
    only = RobotTasks(kinds=["conditional"], size=5)
    assert len(only) == 5 and {only.task(i).metadata["kind"] for i in range(5)} == {"conditional"}
    with pytest.raises(ValueError):
        RobotTasks(kinds=["teleport"])


def test_interactive_reference_is_the_call_sequence():
    task = RobotTasks(mode="interactive").task(2)
    assert task.reference_actions[-1] == "done()" and len(task.reference_actions) > 2
    assert "done()" in task.prompt and "```python" not in task.prompt


def test_open_world_references_offer_options_that_name_one_phrase_each():
    # "herbal tea" also names "tea": offered as an option it counts for neither, so references must not use it.
    source = RobotTasks(kinds=["open_world"], seed=7)
    for index in range(40):
        truth = source.task(index).ground_truth
        assert passes_all(extract(source.task(index).reference_actions[0]).code, truth), index
