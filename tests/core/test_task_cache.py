"""The per-env task cache (`Env._opening`): tasks are built once per index, and nothing an env hands out (its
`task`, `info["task_metadata"]`, the observation) is the cached object, so a caller or agent that edits what it was
given never changes a later episode."""

from __future__ import annotations

import pytest
from gymnasium.utils.passive_env_checker import data_shares_objects
from pydantic import BaseModel

import rlvr_gym
from rlvr_gym import AnswerEnv, Task, Verdict
from rlvr_gym.env import _flat, fresh_copy
from rlvr_gym.family import ListSource


class NestedEnv(AnswerEnv):
    """Tasks with nested metadata and a list ground truth (the deep-copy path), counting `get_task` calls."""

    family = "test"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.source = ListSource([self.make(i) for i in range(3)])
        self.builds = 0

    @staticmethod
    def make(index: int) -> Task:
        return Task(
            id=f"nested-{index}",
            prompt=f"Say {index}.",
            ground_truth=[str(index)],
            reference_actions=[str(index)],
            metadata={"index": index, "tags": ["a", "b"], "limits": {"turns": 1}},
        )

    def get_task(self, index: int) -> Task:
        self.builds += 1
        return super().get_task(index)

    def score_answer(self, task: Task, text: str) -> Verdict:
        ok = [text.strip()] == task.ground_truth
        return Verdict(reward=float(ok), passed=ok)


def _vandalise(env, info) -> None:
    task = env.unwrapped.task
    info["task_metadata"]["question"] = "vandalised"
    info["task_metadata"].pop("index", None)
    task.metadata["answer_form"] = "integer"
    if task.reference_actions is not None:
        task.reference_actions.append("vandalised")
    task.ground_truth = "vandalised"
    for message in task.prompt_messages():
        message.content = "vandalised"


@pytest.mark.parametrize(
    "env_id, kwargs",
    [
        ("rlvr/MathArithmetic-v0", {}),  # flat tasks: shallow copies
        ("rlvr/MathStarter-v0", {}),  # chat-message prompts: deep copies
        ("rlvr/MathDataset-v0", {}),  # a ListSource: the source's own objects
    ],
)
def test_edits_to_handed_out_task_never_reach_a_later_reset(env_id, kwargs):
    env = rlvr_gym.make(env_id, **kwargs)
    pristine = env.unwrapped.get_task(2).model_dump()
    obs, info = env.reset(options={"task_index": 2})
    first_obs = [dict(m) for m in obs]
    _vandalise(env, info)
    obs[0]["content"] = "vandalised"
    obs2, info2 = env.reset(options={"task_index": 2})
    assert env.unwrapped.task.model_dump() == pristine
    assert info2["task_metadata"] == pristine["metadata"]
    assert obs2 == first_obs
    reference = env.unwrapped.task.reference_actions[0]
    assert env.step(reference)[1] == 1.0


def test_nested_values_are_deep_copied_and_tasks_built_once():
    env = NestedEnv()
    for _ in range(3):
        _, info = env.reset(options={"task_index": 1})
        assert info["task_metadata"] == {"index": 1, "tags": ["a", "b"], "limits": {"turns": 1}}
        assert env.task.ground_truth == ["1"]
        info["task_metadata"]["tags"].append("vandalised")
        info["task_metadata"]["limits"]["turns"] = 99
        env.task.ground_truth.append("vandalised")
        assert env.step("1")[1] == 0.0  # this episode's own (edited) ground truth
    assert env.builds == 1
    assert env.source.tasks[1].model_dump() == NestedEnv.make(1).model_dump()  # the source's object untouched


def test_two_resets_share_no_mutable_object():
    for env in (rlvr_gym.make("rlvr/MathArithmetic-v0"), NestedEnv()):
        first = env.reset(options={"task_index": 1})
        second = env.reset(options={"task_index": 1})
        assert not data_shares_objects(first, second)
        assert env.unwrapped.task is not env.unwrapped._tasks[1][0]


def test_a_new_source_empties_the_cache():
    env = NestedEnv()
    env.reset(options={"task_index": 0})
    env.source = ListSource([Task(id="other-0", prompt="Say 7.", ground_truth=["7"], metadata={"index": 0})])
    _, info = env.reset(options={"task_index": 0})
    assert info["task_id"] == "other-0" and env.num_tasks == 1


def test_the_cache_keeps_at_most_task_cache_indices():
    env = NestedEnv(task_cache=2)
    for index in (0, 1, 0, 1, 2, 0):
        env.reset(options={"task_index": index})
    assert env.builds == 4 and len(env._tasks) <= 2  # 0, 1 built; 2 fills the cache up, so 0 is built again
    uncached = NestedEnv(task_cache=0)
    for _ in range(3):
        uncached.reset(options={"task_index": 1})
    assert uncached.builds == 3
    with pytest.raises(ValueError):
        NestedEnv(task_cache=-1)


def _mutable_ids(value, found: set[int]) -> set[int]:
    """Ids of every container or model reachable from `value`."""
    if isinstance(value, BaseModel):
        found.add(id(value))
        for item in value.__dict__.values():
            _mutable_ids(item, found)
    elif isinstance(value, dict | list | set):
        found.add(id(value))
        for item in value.values() if isinstance(value, dict) else value:
            _mutable_ids(item, found)
    elif isinstance(value, tuple):
        for item in value:
            _mutable_ids(item, found)
    return found


@pytest.mark.parametrize("env_id", ["rlvr/MathStarter-v0", "rlvr/Sokoban-v0", "rlvr/ToolDepth-v0", "rlvr/CodeGen-v0"])
def test_fresh_copies_equal_the_task_and_share_nothing_mutable(env_id):
    task = rlvr_gym.make(env_id).unwrapped.get_task(3)
    for flat in {_flat(task), False}:
        copy = fresh_copy(task, flat)
        assert copy.model_dump() == task.model_dump() and copy.model_fields_set == task.model_fields_set
        assert [type(m) for m in copy.prompt_messages()] == [type(m) for m in task.prompt_messages()]
        assert not _mutable_ids(copy, set()) & _mutable_ids(task, set())
