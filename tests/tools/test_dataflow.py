"""TIER credit from data flow (#33): every valid solution the generator can enumerate scores the oracle's reward, in
both reward modes, while the held attacks (identity laundering, unrelated calls + the right answer, skipped steps,
typed-in values) still fail. Also the paper's reward mode, component by component."""

from __future__ import annotations

import collections
import json
import random

import pytest

from rlvr_gym import ToolCall
from rlvr_gym.envs.tools.alternatives import alternative_solutions, as_chain, as_turns, producers
from rlvr_gym.envs.tools.catalog import default_toolset
from rlvr_gym.envs.tools.env import ToolDepthEnv
from rlvr_gym.envs.tools.tasks import DepthTasks
from rlvr_gym.envs.tools.verifier import verify, wrong_answers
from rlvr_gym.tool_markup import format_tool_calls

TOOLSET = default_toolset()
WIDE = ["multiply", "add_numbers", "round_number", "convert_units", "count_words", "distance_km"]


def paper(task):
    """The same task judged by the paper's reward."""
    return task.model_copy(update={"ground_truth": {**task.ground_truth, "reward_mode": "paper"}})


def hermes(name: str, **args) -> str:
    return format_tool_calls([ToolCall(name=name, arguments=json.dumps(args))])


def tier(*calls: tuple[str, dict]) -> str:
    return format_tool_calls(
        [ToolCall(id=str(k), name=n, arguments=json.dumps(a)) for k, (n, a) in enumerate(calls)], style="tier"
    )


DOUBLED = DepthTasks().from_steps(
    [("get_population", {"country": "Norway"}, None), ("multiply", {"b": 2.0}, "a")], WIDE
)
DISTANCE = DepthTasks().from_steps(
    [("get_capital", {"country": "Japan"}, None), ("distance_km", {"city_b": "Paris"}, "city_a")], WIDE
)


# ---- the property: every enumerated alternative scores the oracle's reward ----------------------------------------


def _sample_tasks() -> list:
    tasks = [DOUBLED, DISTANCE]
    for pool in ("seen", "all"):
        source = DepthTasks(tools=pool, extra_tools=8, seed=11)
        tasks += [source.task(i) for i in range(24)]
    return tasks


@pytest.mark.parametrize("mode", ["dataflow", "paper"])
def test_every_enumerated_alternative_scores_the_oracle_reward(mode):
    seen: collections.Counter[str] = collections.Counter()
    for task in _sample_tasks():
        task = paper(task) if mode == "paper" else task
        oracle = verify(task, task.reference_actions)
        assert oracle.passed and oracle.reward == pytest.approx(1.0)
        for label, trajectory in alternative_solutions(task, TOOLSET):
            verdict = verify(task, trajectory)
            assert verdict.passed and verdict.reward == pytest.approx(oracle.reward), (label, trajectory, verdict)
            seen[label.split("/")[0]] += 1
    # the sample exercises each kind of alternative (so this test can fail when the credit follows a script)
    assert seen["swap"] >= 20 and seen["reroute"] >= 10 and seen["permuted"] >= 40, seen


def test_commutative_swap_and_reroute_on_hand_picked_tasks():
    population = DOUBLED.ground_truth["outputs"][0]
    swapped = tier(("get_population", {"country": "Norway"}), ("multiply", {"a": 2.0, "b": "API_RESPONSE_0"}))
    rerouted = tier(
        ("get_population", {"country": "Norway"}), ("add_numbers", {"a": "API_RESPONSE_0", "b": "API_RESPONSE_0"})
    )
    copied = [hermes("get_population", country="Norway"), hermes("add_numbers", a=population, b=population)]
    for trajectory in ([swapped], [rerouted], [*copied, f"Answer: {2 * population}"]):
        verdict = verify(DOUBLED, trajectory)
        assert verdict.passed and verdict.reward == pytest.approx(1.0), trajectory
    city_swap = tier(
        ("get_capital", {"country": "Japan"}), ("distance_km", {"city_a": "Paris", "city_b": "API_RESPONSE_0"})
    )
    assert verify(DISTANCE, [city_swap]).passed
    kinds = {label.split("/")[0] for label, _ in alternative_solutions(DOUBLED, TOOLSET)}
    assert kinds == {"swap", "reroute", "permuted"}


def test_independent_calls_in_any_order_within_a_turn_and_a_chain():
    levels = producers(DOUBLED, TOOLSET)
    assert len(levels[1]) == 3  # multiply(a, 2), multiply(2, a), add_numbers(a, a)
    for order in ([2, 0, 1], [1, 2, 0], [0, 2, 1]):
        plan = [levels[0], [levels[1][i] for i in order]]
        assert verify(DOUBLED, as_turns(DOUBLED, plan)).passed
        assert verify(DOUBLED, as_chain(plan)).passed


# ---- the held attacks -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["dataflow", "paper"])
def test_laundering_and_unrelated_calls_still_fail(mode):
    task = paper(DOUBLED) if mode == "paper" else DOUBLED
    answer = task.ground_truth["answer"]
    for trajectory in (
        [tier(("multiply", {"a": answer, "b": 1.0}))],  # identity laundering, as a chain
        [hermes("add_numbers", a=answer, b=0.0), f"Answer: {int(answer)}"],  # and as a call then the answer
        [tier(("add_numbers", {"a": answer - 1, "b": 1.0}))],  # a typed-in operand: not grounded
        [hermes("get_population", country="Sweden"), f"Answer: {int(answer)}"],  # unrelated call, right value
        [hermes("multiply", a=2.0, b=3.0), f"Answer: {int(answer)}"],
        [f"Answer: {int(answer)}"],
    ):
        verdict = verify(task, trajectory)
        assert not verdict.passed and verdict.components["answer"] == 0.0, (trajectory, verdict)
        if mode == "dataflow":
            assert verdict.reward == 0.0, trajectory


@pytest.mark.parametrize("index", range(8))
def test_generated_wrong_answers_fail_in_both_modes(index):
    task = ToolDepthEnv(tools="all").get_task(index)
    for candidate in (task, paper(task)):
        for wrong in wrong_answers(candidate, random.Random(index)):
            assert not verify(candidate, wrong).passed, wrong


def test_generated_chains_have_no_repeated_or_stated_values():
    source = DepthTasks(tools="all")
    for index in range(60):
        truth = source.task(index).ground_truth
        keys = [json.dumps(v) for v in truth["outputs"]]
        assert len(set(keys)) == len(keys)
        stated = {json.dumps(v) for step in truth["chain"] for v in step["arguments"].values()}
        assert json.dumps(truth["answer"]) not in stated


# ---- the paper's reward mode ------------------------------------------------------------------------------------------


def test_paper_mode_components():
    task = paper(DOUBLED)
    population = task.ground_truth["outputs"][0]
    right = verify(task, task.reference_actions)
    assert right.components["format"] == 1.0 and right.reward == pytest.approx(1.0)
    # a well-formed, executing chain with a wrong value: the whole process half, as in TIER
    wrong = verify(
        task, [tier(("get_population", {"country": "Norway"}), ("multiply", {"a": "API_RESPONSE_0", "b": 3.0}))]
    )
    assert not wrong.passed and wrong.reward == pytest.approx(0.5)
    # an unknown tool with two arguments: names 0, params 1 - 2 x 0.25, execution 0, no answer
    unknown = verify(
        task, [hermes("get_population", country="Norway"), hermes("no_such", a=1, b=2), f"Answer: {2 * population}"]
    )
    want = {"format": 1.0, "tool_names": 0.0, "params": 0.5, "types": 1.0, "execution": 0.0, "answer": 0.0}
    assert {k: unknown.components[k] for k in want} == pytest.approx(want)
    # a type mismatch costs 0.25 of the types part; a block that does not parse zeroes everything
    typed = verify(task, [hermes("get_population", country=7), *task.reference_actions])
    assert typed.components["types"] == pytest.approx(0.75) and typed.components["execution"] == 0.0
    broken = verify(task, ['<tool_call>{"name": "get_population", "arguments": {</tool_call>', "Answer: 1"])
    assert broken.reward == 0.0
    # the default mode withholds the process credit without the right answer
    assert verify(DOUBLED, wrong_answers(DOUBLED, random.Random(0))[0]).reward <= 0.05


def test_paper_mode_is_a_task_option_and_declares_its_floor():
    env = ToolDepthEnv(reward_mode="paper")
    task = env.get_task(0)
    assert task.ground_truth["reward_mode"] == "paper" and "reward_floor" in env.check_exceptions
    assert "reward_mode" not in ToolDepthEnv().get_task(0).ground_truth
    assert not ToolDepthEnv().check_exceptions
    with pytest.raises(ValueError):
        ToolDepthEnv(reward_mode="tier")
