"""ToolDepth env: oracle chains score 1.0 at every depth, corrupted chains lose exactly TIER's components,
multi-turn play, determinism, Gymnasium compliance and fuzzing of `step`."""

from __future__ import annotations

import json
import random

import pytest
from gymnasium.utils.env_checker import check_env

import rlvr_gym
from rlvr_gym import ToolCall
from rlvr_gym.envs.tools.catalog import HELD_OUT, default_toolset, get_capital
from rlvr_gym.envs.tools.depth import ToolDepthEnv
from rlvr_gym.toolcalls import format_tool_calls

PER_DEPTH = 8


def chain_calls(task) -> list[ToolCall]:
    return [ToolCall.model_validate(c) for c in task.ground_truth["chain"]]


def run(env, index_or_task, actions):
    options = {"task": index_or_task} if not isinstance(index_or_task, int) else {"task_index": index_or_task}
    env.reset(options=options)
    info = {}
    for action in actions:
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return info["verdict"]
    return env.truncation_verdict()


@pytest.fixture(scope="module")
def env():
    return ToolDepthEnv()


@pytest.mark.parametrize("split", ["train", "unseen"])
def test_reference_chain_scores_one_at_every_depth(split):
    env = ToolDepthEnv(split=split)
    seen = set()
    for index in range(6 * PER_DEPTH):
        task = env.get_task(index)
        verdict = run(env, index, task.reference_actions)
        assert verdict.reward == pytest.approx(1.0), (task.metadata, verdict)
        assert verdict.passed
        seen.add(task.metadata["depth"])
        chain_tools = set(task.metadata["chain_tools"])
        assert (chain_tools & HELD_OUT) if split == "unseen" else not (set(task.metadata["tool_names"]) & HELD_OUT)
    assert seen == {1, 2, 3, 4, 5, 6}


def test_tasks_are_deterministic_and_depth_is_in_metadata(env):
    a, b = ToolDepthEnv(seed=3).get_task(7), ToolDepthEnv(seed=3).get_task(7)
    assert a.model_dump() == b.model_dump()
    assert ToolDepthEnv(seed=4).get_task(7).model_dump() != a.model_dump()
    assert a.metadata["depth"] == 2  # depths [1..6], index 7 -> 7 % 6 = 1 -> depth 2
    assert len(a.ground_truth["chain"]) == 2
    obs1, _ = env.reset(seed=11)
    obs2, _ = env.reset(seed=11)
    assert obs1 == obs2


def test_prompt_has_schemas_and_exact_format(env):
    task = env.get_task(3)
    system = task.prompt[0].content
    assert "<tools>" in system and "<tool_call>" in system and "Answer: <value>" in system
    assert 'API_RESPONSE_' in system
    for name in task.metadata["tool_names"]:
        assert f'"name": "{name}"' in system
    assert len(task.metadata["tool_names"]) == task.metadata["depth"] + 3


def _corrupt_and_score(env, task, mutate):
    calls = chain_calls(task)
    mutate(calls)
    return run(env, task, [format_tool_calls(calls, style="tier")])


def _expected(components: dict[str, float]) -> float:
    weights = {"format": 0.1, "tool_names": 0.1, "params": 0.1, "types": 0.1, "execution": 0.1, "answer": 0.5}
    return sum(weights[k] * v for k, v in components.items())


def _tier_part(verdict):
    return {k: verdict.components[k] for k in ("format", "tool_names", "params", "types", "execution", "answer")}


@pytest.mark.parametrize("index", range(12))
def test_corruptions_lose_exactly_the_tier_components(env, index):
    task = env.get_task(index)
    first = chain_calls(task)[0]
    first_args = json.loads(first.arguments)
    schema = default_toolset()[first.name].parameters

    # wrong tool name: name component lost, each of its arguments is an unknown parameter, execution fails
    def rename(calls):
        calls[0] = calls[0].model_copy(update={"name": "no_such_tool"})

    verdict = _corrupt_and_score(env, task, rename)
    want = {"format": 1.0, "tool_names": 0.0, "params": max(0.0, 1 - 0.25 * len(first_args)), "types": 1.0,
            "execution": 0.0, "answer": 0.0}
    assert _tier_part(verdict) == want and verdict.reward == pytest.approx(_expected(want))

    # wrong type of one argument: one type mismatch (-0.025), execution and answer lost
    param = sorted(first_args)[0]
    bad_value = 12345 if schema["properties"][param].get("type") == "string" else "not a number"

    def retype(calls):
        calls[0] = calls[0].model_copy(update={"arguments": json.dumps({**first_args, param: bad_value})})

    verdict = _corrupt_and_score(env, task, retype)
    want = {"format": 1.0, "tool_names": 1.0, "params": 1.0, "types": 0.75, "execution": 0.0, "answer": 0.0}
    assert _tier_part(verdict) == want and verdict.reward == pytest.approx(0.375)

    # missing required argument: one parameter mismatch, execution and answer lost
    required = schema["required"][0]

    def drop(calls):
        calls[0] = calls[0].model_copy(
            update={"arguments": json.dumps({k: v for k, v in first_args.items() if k != required})})

    verdict = _corrupt_and_score(env, task, drop)
    want = {"format": 1.0, "tool_names": 1.0, "params": 0.75, "types": 1.0, "execution": 0.0, "answer": 0.0}
    assert _tier_part(verdict) == want and verdict.reward == pytest.approx(0.375)

    # wrong order (depth >= 2): a call uses an output not computed yet, so only execution and answer are lost
    if task.metadata["depth"] >= 2:
        verdict = _corrupt_and_score(env, task, lambda calls: calls.reverse())
        want = {"format": 1.0, "tool_names": 1.0, "params": 1.0, "types": 1.0, "execution": 0.0, "answer": 0.0}
        assert _tier_part(verdict) == want and verdict.reward == pytest.approx(0.4)


def test_unparseable_chain_scores_zero(env):
    task = env.get_task(2)
    verdict = run(env, task, [task.reference_actions[0][:-30]])
    assert verdict.reward == 0.0 or not verdict.passed


def test_answer_without_any_tool_call_gets_nothing(env):
    task = env.get_task(0)
    verdict = run(env, task, [f"Answer: {task.ground_truth['answer']}"])
    assert verdict.reward == 0.0 and verdict.components["format"] == 0.0


def _multi_turn_actions(task) -> list[str]:
    """One literal call per turn (placeholders replaced by the known outputs), then the final answer."""
    outputs = task.ground_truth["outputs"]
    actions = []
    for call in chain_calls(task):
        args = json.loads(call.arguments)
        args = {k: outputs[int(v.split("_")[-1])] if isinstance(v, str) and v.startswith("API_RESPONSE_") else v
                for k, v in args.items()}
        actions.append(f"<tool_call>\n{json.dumps({'name': call.name, 'arguments': args})}\n</tool_call>")
    return actions + [f"The result is in.\nAnswer: {task.ground_truth['answer']}"]


@pytest.mark.parametrize("index", range(6))
def test_multi_turn_play_with_tool_messages_scores_one(index):
    env = ToolDepthEnv()
    task = env.get_task(index)
    env.reset(options={"task_index": index})
    actions = _multi_turn_actions(task)
    for action in actions[:-1]:
        obs, reward, terminated, truncated, info = env.step(action)
        assert not terminated and obs[0]["role"] == "tool" and obs[0]["tool_call_id"] == "call_0"
        assert "result" in json.loads(obs[0]["content"])
    *_, terminated, _, info = env.step(actions[-1])
    assert terminated and info["verdict"].reward == pytest.approx(1.0)


def test_parallel_calls_and_structured_errors_in_one_turn(env):
    env.reset(options={"task_index": 0})
    names = env.offered()
    action = "\n".join([
        f'<tool_call>{{"name": "{names[0]}", "arguments": {{}}}}</tool_call>',
        '<tool_call>{"name": "teleport", "arguments": {"to": "Mars"}}</tool_call>',
        '<tool_call>{"name": "broken", "arguments": {</tool_call>',
    ])
    obs, _, terminated, _, info = env.step(action)
    assert not terminated and not info["valid_action"]
    tool_msgs = [m for m in obs if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_msgs] == ["call_0", "call_1"]
    errors = [json.loads(m["content"])["error"] for m in tool_msgs]
    assert errors[0]["kind"] == "schema" and errors[0]["field"]
    assert errors[1]["kind"] == "unknown_tool"
    assert obs[-1]["role"] == "user" and "invalid_json" in obs[-1]["content"]


def test_turn_limit_truncates_with_a_verdict():
    env = ToolDepthEnv(max_turns=2)
    env.reset(options={"task_index": 1})
    call = _multi_turn_actions(env.task)[0]
    env.step(call)
    *_, terminated, truncated, info = env.step(call)
    assert truncated and not terminated and info["verdict"].components["answer"] == 0.0


def test_tool_schema_comes_from_the_signature():
    schema = get_capital.schema["function"]
    assert schema["name"] == "get_capital" and schema["parameters"]["required"] == ["country"]
    assert schema["parameters"]["properties"]["country"]["type"] == "string"
    world = default_toolset().new_world()
    assert get_capital.run(world, {"country": "Japan"}).result == "Tokyo"
    assert get_capital.run(world, {"country": 3}).error_kind == "schema"
    assert get_capital.run(world, {"country": "Atlantis"}).error_kind == "runtime"


def test_stateful_backend_is_fresh_per_episode(env):
    toolset = default_toolset()
    world = toolset.new_world()
    toolset.execute(world, "write_file", {"path": "/tmp/x.txt", "content": "a b"})
    assert toolset.execute(world, "read_file", {"path": "/tmp/x.txt"}).result == "a b"
    assert not toolset.execute(toolset.new_world(), "read_file", {"path": "/tmp/x.txt"}).ok


def test_check_env_and_registry():
    check_env(ToolDepthEnv(), skip_render_check=True)
    env = rlvr_gym.make("rlvr/ToolDepth12-v0")
    assert {env.get_task(i).metadata["depth"] for i in range(4)} == {1, 2}
    assert rlvr_gym.make("rlvr/ToolDepth-v0", depths=[5]).get_task(0).metadata["depth"] == 5


def test_fuzzed_actions_never_raise_from_step(env):
    rng = random.Random(0)
    task = env.get_task(5)
    reference = task.reference_actions[0]
    fragments = ["<tool_call>", "</tool_call>", "<think>", "</think>", '{"name": ', '"arguments": ', "{", "}",
                 "[", "]", '"API_RESPONSE_9"', "null", "1e999", '"x"' * 50, "```json\n", "\x00", '{"0": {"a": 1}}']
    for i in range(300):
        kind = i % 5
        if kind == 0:
            action = reference[: rng.randint(0, len(reference))]
        elif kind == 1:
            action = "".join(rng.choice(fragments) for _ in range(rng.randint(1, 12)))
        elif kind == 2:
            action = reference.replace('"', rng.choice(["'", "", '""']), rng.randint(1, 4))
        elif kind == 3:
            action = '<tool_call>{{"name": "{}", "arguments": {{"country": {}}}}}</tool_call>'.format(
                rng.choice(task.metadata["tool_names"] + ["zzz", ""]), rng.choice(["1", "[]", '"' + "y" * 100_000 + '"',
                                                                               "{}", "true", '"API_RESPONSE_0"']))
        else:
            action = format_tool_calls([ToolCall(name=rng.choice(["get_capital", "??", "a" * 5000]),
                                                 arguments=rng.choice(["{}", "[1]", "nope", '{"q": 1}']))])
        env.reset(options={"task_index": 5})
        for _ in range(2):
            obs, reward, terminated, truncated, info = env.step(action)
            assert isinstance(obs, list) and isinstance(reward, float)
            if terminated or truncated:
                assert info["verdict"].reward <= 1.0
                break


def test_any_valid_execution_path_gets_full_credit():
    env = ToolDepthEnv()
    task = env.get_task(0).model_copy(deep=True)
    task.ground_truth = {"answer": 92.0}
    task.metadata["tool_names"] = ["convert_currency"]
    direct = [ToolCall(id="0", name="convert_currency",
                       arguments='{"amount": 100, "from_currency": "USD", "to_currency": "EUR"}')]
    via_gbp = [ToolCall(id="0", name="convert_currency",
                        arguments='{"amount": 100, "from_currency": "USD", "to_currency": "GBP"}'),
               ToolCall(id="1", name="convert_currency",
                        arguments='{"amount": "API_RESPONSE_0", "from_currency": "GBP", "to_currency": "EUR"}')]
    for calls in (direct, via_gbp):
        assert run(env, task, [format_tool_calls(calls, style="tier")]).reward == pytest.approx(1.0)
    wrong = [direct[0].model_copy(update={"arguments": '{"amount": 100, "from_currency": "USD", "to_currency": "JPY"}'})]
    verdict = run(env, task, [format_tool_calls(wrong, style="tier")])
    assert verdict.reward == pytest.approx(0.5) and verdict.components["answer"] == 0.0


def test_text_answers_are_compared_by_value():
    from rlvr_gym.envs.tools.answers import text_matches

    assert text_matches("So the total is known.\nAnswer: 1,311", 1311.0)
    assert text_matches("Answer: **Tokyo**.", "Tokyo")
    assert not text_matches("Answer: 1312", 1311.0)
    assert not text_matches("I am not sure", "Tokyo")
