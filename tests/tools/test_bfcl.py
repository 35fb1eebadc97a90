"""BFCL single-turn categories from the installed bfcl-eval data: ground truth scores correct, wrong calls don't."""

from __future__ import annotations

import json
import random

import pytest
from gymnasium.utils.env_checker import check_env

import rlvr_gym
from rlvr_gym.envs.tools import bfcl
from rlvr_gym.envs.tools.env import BFCLEnv
from rlvr_gym.envs.tools.tasks import BFCLTasks
from rlvr_gym.envs.tools.verifier import verify, wrong_answers

try:
    bfcl.data_dir()
except bfcl.BFCLDataMissing:  # pragma: no cover - the package is a declared extra
    pytest.skip("bfcl-eval is not installed (pip install --no-deps bfcl-eval)", allow_module_level=True)

# Items whose possible answers contradict their own schema (no call can pass BFCL's rules); see the report.
KNOWN_BAD = {
    "live_simple_106-63-0",
    "live_simple_112-68-0",
    "live_multiple_507-149-4",
    "live_multiple_862-181-3",
    "live_multiple_964-207-0",
}


def task_for(category: str, index: int):
    return BFCLTasks(category=category).task(index)


@pytest.mark.parametrize("category", sorted(bfcl.CATEGORY_FILES))
def test_ground_truth_calls_score_correct(category):
    items = bfcl.load_category(category)
    assert items
    misses = []
    source = BFCLTasks(category=category)
    for index, item in enumerate(items):
        task = source.task(index)
        assert task.id == f"tools/eval/{index}" and task.metadata["bfcl_id"] == item["id"]
        if not bfcl.score_action(task, task.reference_actions[0]).passed:
            misses.append(item["id"])
    assert len(misses) <= 0.01 * len(items), misses
    assert set(misses) <= KNOWN_BAD


def _wrong_variants(task) -> list[str]:
    calls = bfcl.reference_calls(
        {"function": task.ground_truth["function"], "ground_truth": task.ground_truth["ground_truth"]}
    )
    name, args = calls[0]
    variants = [[(name + "_x", args)] + calls[1:], calls[1:]]
    if args:
        key = sorted(args)[0]
        value = args[key]
        changed = 987654 if isinstance(value, str) else ("zz-wrong" if not isinstance(value, list) else ["zz"])
        variants.append([(name, {**args, key: changed})] + calls[1:])
        variants.append([(name, {k: v for k, v in args.items() if k != key})] + calls[1:])
    variants.append([(name, {**args, "bogus_param": 1})] + calls[1:])
    return [bfcl.hermes(v) for v in variants]


@pytest.mark.parametrize("category", ["simple", "multiple", "parallel", "parallel_multiple", "live_simple"])
def test_deliberately_wrong_calls_score_wrong(category):
    items = bfcl.load_category(category)
    rng = random.Random(category)
    wrong = total = 0
    for index in rng.sample(range(len(items)), 25):
        task = task_for(category, index)
        for action in _wrong_variants(task):
            verdict = bfcl.score_action(task, action)
            total += 1
            wrong += not verdict.passed
    # a dropped parameter can be legitimately optional, so not every variant must fail
    assert wrong / total >= 0.9, (wrong, total)


def test_wrong_name_and_extra_param_always_fail():
    task = task_for("simple", 0)
    assert bfcl.score_action(task, task.reference_actions[0]).passed
    for action in _wrong_variants(task):
        if "_x" in action or "bogus_param" in action:
            assert not bfcl.score_action(task, action).passed


def test_string_normalisation_and_int_for_float():
    item = {
        "function": [
            {
                "name": "f",
                "parameters": {
                    "type": "dict",
                    "required": ["city", "x"],
                    "properties": {
                        "city": {"type": "string"},
                        "x": {"type": "float"},
                        "tags": {"type": "array", "items": {"type": "string"}},
                    },
                },
            }
        ],
        "ground_truth": [{"f": {"city": ["San Francisco, CA"], "x": [2.0], "tags": [["a b"], ""]}}],
    }
    assert bfcl.check_calls(item, [("f", {"city": "san francisco CA", "x": 2})], "simple") is None
    assert bfcl.check_calls(item, [("f", {"city": "SanFrancisco,CA", "x": 2.0, "tags": ["A-B"]})], "simple") is None
    assert bfcl.check_calls(item, [("f", {"city": "Oakland", "x": 2.0})], "simple") is not None
    assert bfcl.check_calls(item, [("f", {"city": "San Francisco, CA", "x": "2"})], "simple") is not None
    assert bfcl.check_calls(item, [("f", {"city": "San Francisco, CA", "x": True})], "simple") is not None


def test_parallel_calls_match_in_any_order_but_count_matters():
    item = {
        "function": [
            {"name": "g", "parameters": {"type": "dict", "required": ["n"], "properties": {"n": {"type": "integer"}}}}
        ],
        "ground_truth": [{"g": {"n": [1]}}, {"g": {"n": [2]}}],
    }
    assert bfcl.check_calls(item, [("g", {"n": 2}), ("g", {"n": 1})], "parallel") is None
    assert bfcl.check_calls(item, [("g", {"n": 1})], "parallel") is not None
    assert bfcl.check_calls(item, [("g", {"n": 1}), ("g", {"n": 1})], "parallel") is not None


def test_irrelevance_rewards_no_call_only():
    task = task_for("irrelevance", 0)
    assert bfcl.score_action(task, task.reference_actions[0]).passed
    fn = task.ground_truth["function"][0]
    call = f"<tool_call>{json.dumps({'name': fn['name'], 'arguments': {}})}</tool_call>"
    assert not bfcl.score_action(task, call).passed


def test_env_registry_and_check_env():
    env = rlvr_gym.make("rlvr/BFCL-v0", category="parallel")
    assert env.num_tasks == len(bfcl.load_category("parallel"))
    obs, info = env.reset(options={"task_index": 3})
    assert obs[0]["role"] == "system" and "<tools>" in obs[0]["content"]
    _, reward, terminated, _, info = env.step(env.task.reference_actions[0])
    assert terminated and reward == 1.0
    check_env(BFCLEnv(category="simple"), skip_render_check=True)
    with pytest.raises(ValueError):
        BFCLEnv(category="nope")


def test_prompt_schemas_are_json_schema():
    task = task_for("simple", 0)
    schema = bfcl.openai_tools(task.ground_truth["function"])[0]["function"]["parameters"]
    assert schema["type"] == "object"
    assert '"type": "dict"' not in task.prompt[0].content


def test_fuzzed_actions_never_raise_from_step():
    env = BFCLEnv(category="live_multiple")
    rng = random.Random(1)
    for i in range(150):
        env.reset(options={"task_index": i})
        reference = env.task.reference_actions[0]
        action = rng.choice(
            [
                reference[: rng.randint(0, len(reference))],
                reference.replace("{", "[", 1),
                reference.replace('"', "", rng.randint(1, 3)),
                "<tool_call>" * 50,
                "",
                '<tool_call>{"name": "x", "arguments": {"a": "' + "q" * 200_000 + '"}}</tool_call>',
            ]
        )
        obs, reward, terminated, truncated, info = env.step(action)
        assert terminated and reward in (0.0, 1.0) and isinstance(info["verdict"].feedback, str)


def test_eval_only_splits_and_verify_signature():
    assert len(BFCLTasks(split="train", category="simple")) == 0
    task = task_for("parallel", 2)
    assert verify(task, task.reference_actions).passed
    assert "ground_truth" not in task.view().model_dump() and task.metadata["difficulty"] == 3
    broken = verify(task, ['<tool_call>{"name": "x", "arguments": {</tool_call>'])
    assert not broken.valid and broken.reward == 0.0 and broken.error


@pytest.mark.parametrize("category", ["simple", "multiple", "parallel", "parallel_multiple", "irrelevance"])
def test_wrong_answer_generator_never_passes(category):
    source = BFCLTasks(category=category)
    for index in range(0, len(source), max(1, len(source) // 15)):
        task = source.task(index)
        for wrong in wrong_answers(task, random.Random(index)):
            assert not verify(task, wrong).passed, (task.metadata["bfcl_id"], wrong)
