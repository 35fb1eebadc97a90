"""ToolDepth: the oracle chain scores 1.0 at every depth, the reward follows provenance and data flow (attacks written by
someone who has read the verifier), multi-turn play, determinism, splits, Gymnasium compliance and fuzzing."""

from __future__ import annotations

import json
import random

import pytest
from gymnasium.utils.env_checker import check_env

import rlvr_gym
from rlvr_gym import ToolCall
from rlvr_gym.envs.tools.answers import Ambiguous, answer_matches, extract_answer
from rlvr_gym.envs.tools.catalog import HELD_OUT, default_toolset, get_capital
from rlvr_gym.envs.tools.env import ToolDepthEnv
from rlvr_gym.envs.tools.tasks import DepthTasks
from rlvr_gym.envs.tools.tier import UNANSWERED_SHARE
from rlvr_gym.envs.tools.verifier import verify, wrong_answers
from rlvr_gym.tool_markup import format_tool_calls

PER_DEPTH = 8
TOOLSET = default_toolset()
NEUTRAL_TOOLS = ["multiply", "add_numbers", "round_number", "convert_units"]


def hermes(name: str, **args) -> str:
    return format_tool_calls([ToolCall(name=name, arguments=json.dumps(args))])


def tier(*calls: tuple[str, dict]) -> str:
    return format_tool_calls(
        [ToolCall(id=str(k), name=n, arguments=json.dumps(a)) for k, (n, a) in enumerate(calls)], style="tier"
    )


def custom_task(steps: list[tuple[str, dict, str | None]], extra: list[str] = NEUTRAL_TOOLS):
    """A depth task with a hand-picked chain (outputs from a real run) and some neutral tools on offer."""
    return DepthTasks(extra_tools=0).from_steps(steps, extra)


POPULATION = custom_task([("get_population", {"country": "China"}, None)])  # 1,410,000,000
CAPITAL_OF_LYON = custom_task([("get_country_of_city", {"city": "Lyon"}, None), ("get_capital", {}, "country")])
TRIPLED = custom_task([("get_population", {"country": "Norway"}, None), ("multiply", {"b": 3.0}, "a")])
EUROS = custom_task([("convert_currency", {"amount": 100.0, "from_currency": "USD", "to_currency": "EUR"}, None)])


def literal_turns(task) -> list[str]:
    """One call per turn with the previous output copied from the tool message, as a model would."""
    outputs = task.ground_truth["outputs"]
    return [
        hermes(s["name"], **{**s["arguments"], **({s["chained"]: outputs[k - 1]} if s["chained"] else {})})
        for k, s in enumerate(task.ground_truth["chain"])
    ]


def _show(value) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


# ---- oracle, determinism, splits -----------------------------------------------------------------------------------


@pytest.mark.parametrize("tools", ["seen", "unseen"])
def test_reference_chain_scores_one_at_every_depth(tools):
    env = ToolDepthEnv(tools=tools)
    depths = set()
    for index in range(6 * PER_DEPTH):
        task = env.get_task(index)
        verdict = env.verify(task, task.reference_actions)
        assert verdict.reward == pytest.approx(1.0) and verdict.passed and verdict.valid, (task.metadata, verdict)
        depths.add(task.metadata["depth"])
        chain_tools = {s["name"] for s in task.ground_truth["chain"]}
        assert (chain_tools & HELD_OUT) if tools == "unseen" else not (set(task.metadata["tool_names"]) & HELD_OUT)
        assert task.id == f"tools/train/{index}" and 1 <= task.metadata["difficulty"] <= 5
    assert depths == {1, 2, 3, 4, 5, 6}


def test_tasks_are_deterministic_and_public_metadata_hides_the_chain():
    a, b = ToolDepthEnv(seed=3).get_task(7), ToolDepthEnv(seed=3).get_task(7)
    assert a.model_dump() == b.model_dump()
    assert ToolDepthEnv(seed=4).get_task(7).model_dump() != a.model_dump()
    assert a.metadata["depth"] == 2 and len(a.ground_truth["chain"]) == 2
    public = json.dumps(a.view().metadata)
    assert "API_RESPONSE" not in public and "outputs" not in public and "chain" not in public
    assert str(a.ground_truth["answer"]) not in json.dumps(a.view().model_dump())


def test_no_repeated_question_within_a_split_and_splits_are_disjoint():
    train = [DepthTasks(split="train").task(i).prompt[1].content for i in range(300)]
    evals = [DepthTasks(split="eval").task(i).prompt[1].content for i in range(60)]
    assert len(set(train)) == len(train) and len(set(evals)) == len(evals)
    assert not set(train) & set(evals)


def test_prompt_has_schemas_and_exact_format():
    task = ToolDepthEnv().get_task(3)
    system = task.prompt[0].content
    assert "<tools>" in system and "<tool_call>" in system and "Answer: <value>" in system and "API_RESPONSE_" in system
    for name in task.metadata["tool_names"]:
        assert f'"name": "{name}"' in system
    assert len(task.metadata["tool_names"]) == task.metadata["depth"] + 3


# ---- provenance: what earns the answer -----------------------------------------------------------------------------


def test_multi_turn_chain_with_copied_outputs_scores_one():
    for task in (POPULATION, CAPITAL_OF_LYON, TRIPLED, EUROS):
        verdict = verify(task, [*literal_turns(task), f"Done.\nAnswer: {_show(task.ground_truth['answer'])}"])
        assert verdict.passed and verdict.reward == pytest.approx(1.0), verdict


def test_unrelated_call_then_the_right_number_earns_nothing():
    answer = _show(POPULATION.ground_truth["answer"])
    verdict = verify(POPULATION, [hermes("multiply", a=2.0, b=3.0), f"Answer: {answer}"])
    assert verdict.reward == 0.0 and not verdict.passed and verdict.components["unrelated_calls"] == 1
    # the right tools fed a value the question does not state are ungrounded, even when the output coincides
    paris = verify(
        CAPITAL_OF_LYON,
        [hermes("get_country_of_city", city="Paris"), hermes("get_capital", country="France"), "Answer: Paris"],
    )
    assert paris.reward == 0.0 and not paris.passed


def test_right_number_without_any_call_earns_nothing():
    verdict = verify(POPULATION, ["Answer: 1410000000"])
    assert verdict.reward == 0.0 and verdict.components["calls"] == 0


@pytest.mark.parametrize(
    "launder",
    [
        lambda x: [tier(("multiply", {"a": x, "b": 1.0}))],
        lambda x: [tier(("add_numbers", {"a": x, "b": 0.0}))],
        lambda x: [tier(("round_number", {"value": x, "digits": 2}))],
        lambda x: [tier(("convert_units", {"value": x, "from_unit": "km", "to_unit": "km"}))],
        lambda x: [hermes("multiply", a=x, b=1.0), f"Answer: {_show(x)}"],
    ],
)
def test_neutral_element_laundering_does_not_count_as_a_step(launder):
    for task in (POPULATION, TRIPLED):
        verdict = verify(task, launder(float(task.ground_truth["answer"])))
        assert verdict.reward == 0.0 and not verdict.passed, verdict


def test_identity_in_place_of_the_last_step_breaks_the_chain():
    population = TRIPLED.ground_truth["outputs"][0]
    chain = tier(
        ("get_population", {"country": "Norway"}),
        ("multiply", {"a": "API_RESPONSE_0", "b": 1.0}),
        ("multiply", {"a": float(population * 3), "b": 1.0}),
    )
    verdict = verify(TRIPLED, [chain])
    assert not verdict.passed and verdict.components["answer"] == 0.0
    assert verdict.components["progress"] == pytest.approx(0.5)


def test_identity_inserted_between_required_steps_is_transparent_but_no_step():
    chain = tier(
        ("get_population", {"country": "Norway"}),
        ("multiply", {"a": "API_RESPONSE_0", "b": 1.0}),
        ("multiply", {"a": "API_RESPONSE_1", "b": 3.0}),
    )
    verdict = verify(TRIPLED, [chain])
    assert verdict.passed and verdict.components["unrelated_calls"] == 1


def test_values_typed_in_the_same_message_are_guesses_not_provenance():
    country = CAPITAL_OF_LYON.ground_truth["outputs"][0]
    guessed = tier(("get_country_of_city", {"city": "Lyon"}), ("get_capital", {"country": country}))
    verdict = verify(CAPITAL_OF_LYON, [guessed])
    assert not verdict.passed and verdict.components["progress"] == pytest.approx(0.5)
    same_turn = verify(
        CAPITAL_OF_LYON,
        [hermes("get_country_of_city", city="Lyon") + "\n" + hermes("get_capital", country=country), "Answer: Paris"],
    )
    assert not same_turn.passed


def test_skipped_step_with_the_value_typed_in_fails():
    country = CAPITAL_OF_LYON.ground_truth["outputs"][0]
    verdict = verify(CAPITAL_OF_LYON, [hermes("get_capital", country=country), "Answer: Paris"])
    assert verdict.reward == 0.0 and not verdict.passed


def test_route_through_a_value_the_question_does_not_state_is_not_grounded():
    # GBP is the agent's own choice, not stated by the question, a schema constant or a tool output (test_dataflow.py
    # has the grounded alternatives, which score the oracle's reward)
    via_gbp = tier(
        ("convert_currency", {"amount": 100.0, "from_currency": "USD", "to_currency": "GBP"}),
        ("convert_currency", {"amount": "API_RESPONSE_0", "from_currency": "GBP", "to_currency": "EUR"}),
    )
    assert not verify(EUROS, [via_gbp]).passed


def test_chain_must_be_alone_in_its_message_and_return_one():
    reference = CAPITAL_OF_LYON.reference_actions[0]
    for action in (
        reference + "\n" + hermes("get_capital", country="Japan"),
        reference + reference,
        reference.replace('return="one"', 'return="all"'),
    ):
        verdict = verify(CAPITAL_OF_LYON, [action])
        assert not verdict.valid and verdict.reward == 0.0


def test_trailing_unrelated_call_changes_what_the_chain_returns():
    calls = [
        ToolCall(id="0", name="get_country_of_city", arguments='{"city": "Lyon"}'),
        ToolCall(id="1", name="get_capital", arguments='{"country": "API_RESPONSE_0"}'),
        ToolCall(id="2", name="get_capital", arguments='{"country": "Japan"}'),
    ]
    verdict = verify(CAPITAL_OF_LYON, [format_tool_calls(calls, style="tier")])
    assert not verdict.passed and verdict.components["progress"] == 1.0


def test_two_committed_answers_are_invalid_and_answers_in_think_or_fences_do_not_count():
    turns = literal_turns(CAPITAL_OF_LYON)
    two = verify(CAPITAL_OF_LYON, [*turns, "Answer: Paris\nAnswer: Lyon"])
    assert not two.valid and two.reward == 0.0 and not two.passed
    hidden = verify(CAPITAL_OF_LYON, [*turns, "<think>Answer: Paris</think>```\nAnswer: Paris\n```\nI am not sure."])
    assert not hidden.valid and hidden.reward == 0.0
    assert verify(CAPITAL_OF_LYON, [*turns, "<think>Answer: Lyon</think>Answer: Paris"]).passed


def test_integer_answers_are_exact_however_large():
    turns = literal_turns(POPULATION)
    for text, ok in (
        ("1410000000", True),
        ("1,410,000,000", True),
        ("1.41e9", True),
        ("1410000000.0", True),
        ("1410000001", False),
        ("1409999999", False),
        ("1.41e9 or 1410000001", False),
        ("1 410 000 000", False),
        ("141,0000,000", False),
    ):
        verdict = verify(POPULATION, [*turns, f"Answer: {text}"])
        assert verdict.passed is ok, (text, verdict)


def test_real_answers_match_at_the_precision_the_tool_reported():
    assert answer_matches("92.0", 92.0) and not answer_matches("92.4", 92.0)
    for text, ok in (
        ("92.35", True),
        ("92.350", True),
        ("92.3500001", True),
        ("92.36", False),
        ("92.3", False),
        ("92.4", False),
        ("9.235e1", True),
        ("€92.35", True),
        ("92.35 EUR", True),
    ):
        assert answer_matches(text, 92.35) is ok, text
    with pytest.raises(Ambiguous):
        answer_matches("92.35 or 92.36", 92.35)
    assert answer_matches("Tokyo", "tokyo") and not answer_matches("Tokyo or Kyoto", "Tokyo")


def test_answer_extraction_rule():
    assert extract_answer("Thinking done.\n**Answer:** 1,311.") == "1,311"
    assert extract_answer("> Answer = Tokyo\n") == "Tokyo"
    for text in ("no marker here", "the answer: 3", "Answer:", "Answer: " + "9" * 300, "answer " * 2000):
        with pytest.raises(Ambiguous):
            extract_answer(text)


def test_failed_call_removes_answer_credit_as_in_tier():
    turns = literal_turns(CAPITAL_OF_LYON)
    verdict = verify(CAPITAL_OF_LYON, [hermes("get_capital", country="Atlantis"), *turns, "Answer: Paris"])
    assert not verdict.passed and verdict.components["execution"] == 0.0 and verdict.reward == pytest.approx(0.4)


@pytest.mark.parametrize("index", range(12))
def test_generated_wrong_answers_never_pass(index):
    task = ToolDepthEnv().get_task(index)
    wrongs = wrong_answers(task, random.Random(index))
    assert len(wrongs) >= 5
    for wrong in wrongs:
        assert not verify(task, wrong).passed, wrong


# ---- TIER components on a corrupted last step ----------------------------------------------------------------------


@pytest.mark.parametrize("index", [1, 2, 3, 7, 8, 9])
def test_corrupted_last_step_keeps_a_share_of_process_credit_for_the_executed_prefix(index):
    task = ToolDepthEnv().get_task(index)
    calls = [ToolCall.model_validate(c) for c in json.loads(json.dumps(_chain_calls(task)))]
    depth = len(calls)
    progress = (depth - 1) / depth * UNANSWERED_SHARE  # no right answer: the process keeps 8% of its credit
    last_args = json.loads(calls[-1].arguments)
    calls[-1] = calls[-1].model_copy(update={"name": "no_such_tool"})
    verdict = verify(task, [format_tool_calls(calls, style="tier")])
    want = {
        "format": progress,
        "tool_names": 0.0,
        "params": progress * max(0.0, 1 - 0.25 * len(last_args)),
        "types": progress,
        "execution": 0.0,
        "answer": 0.0,
    }
    assert {k: verdict.components[k] for k in want} == pytest.approx(want)
    assert not verdict.passed


@pytest.mark.parametrize("index", [0, 4])
def test_the_right_chain_with_a_wrong_answer_earns_at_most_the_floor(index):
    task = ToolDepthEnv().get_task(index)
    chain_then_wrong = wrong_answers(task, random.Random(index))[0]
    verdict = verify(task, chain_then_wrong)
    assert verdict.components["progress"] == 1.0 and not verdict.passed
    assert verdict.reward == pytest.approx(0.5 * UNANSWERED_SHARE) and verdict.reward <= 0.05


def _chain_calls(task) -> list[dict]:
    out = []
    for k, step in enumerate(task.ground_truth["chain"]):
        args = {**step["arguments"], **({step["chained"]: f"API_RESPONSE_{k - 1}"} if step["chained"] else {})}
        out.append({"id": str(k), "name": step["name"], "arguments": json.dumps(args)})
    return out


# ---- the env -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("index", range(4))
def test_multi_turn_play_with_tool_messages_matches_offline_verify(index):
    env = ToolDepthEnv()
    task = env.get_task(index)
    env.reset(options={"task_index": index})
    actions = [*literal_turns(task), f"The result is in.\nAnswer: {_show(task.ground_truth['answer'])}"]
    for action in actions[:-1]:
        obs, _, terminated, _, _ = env.step(action)
        assert not terminated and obs[0]["role"] == "tool" and obs[0]["tool_call_id"] == "call_0"
        assert "result" in json.loads(obs[0]["content"])
    *_, terminated, _, info = env.step(actions[-1])
    assert terminated and info["verdict"].reward == pytest.approx(1.0)
    assert info["verdict"] == env.verify(task, actions)


def test_parallel_calls_and_structured_errors_in_one_turn():
    env = ToolDepthEnv()
    env.reset(options={"task_index": 0})
    names = env.offered()
    action = "\n".join(
        [
            f'<tool_call>{{"name": "{names[0]}", "arguments": {{}}}}</tool_call>',
            '<tool_call>{"name": "teleport", "arguments": {"to": "Mars"}}</tool_call>',
            '<tool_call>{"name": "broken", "arguments": {</tool_call>',
        ]
    )
    obs, _, terminated, _, info = env.step(action)
    assert not terminated and not info["valid_action"]
    tool_msgs = [m for m in obs if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_msgs] == ["call_0", "call_1"]
    errors = [json.loads(m["content"])["error"] for m in tool_msgs]
    assert errors[0]["kind"] == "schema" and errors[0]["field"]
    assert errors[1]["kind"] == "unknown_tool"
    assert obs[-1]["role"] == "user" and "invalid_json" in obs[-1]["content"]


def test_turn_limit_truncates_with_an_invalid_verdict():
    env = ToolDepthEnv(max_turns=2)
    env.reset(options={"task_index": 1})
    call = literal_turns(env.task)[0]
    env.step(call)
    *_, terminated, truncated, info = env.step(call)
    assert truncated and not terminated and not info["verdict"].valid and info["verdict"].reward == 0.0


def test_tool_schema_comes_from_the_signature():
    schema = get_capital.schema["function"]
    assert schema["name"] == "get_capital" and schema["parameters"]["required"] == ["country"]
    assert schema["parameters"]["properties"]["country"]["type"] == "string"
    world = TOOLSET.new_world()
    assert get_capital.run(world, {"country": "Japan"}).result == "Tokyo"
    bad = get_capital.run(world, {"country": 3, "extra": 1})
    assert bad.error_kind == "schema" and (bad.param_errors, bad.type_errors) == (1, 1)
    assert get_capital.run(world, {"country": "Atlantis"}).error_kind == "runtime"


def test_stateful_backend_is_fresh_per_episode():
    world = TOOLSET.new_world()
    TOOLSET.execute(world, "write_file", {"path": "/tmp/x.txt", "content": "a b"})
    assert TOOLSET.execute(world, "read_file", {"path": "/tmp/x.txt"}).result == "a b"
    assert not TOOLSET.execute(TOOLSET.new_world(), "read_file", {"path": "/tmp/x.txt"}).ok


def test_gymnasium_check_and_registry():
    check_env(ToolDepthEnv(), skip_render_check=True)
    env = rlvr_gym.make("rlvr/ToolDepth12-v0")
    assert {env.get_task(i).metadata["depth"] for i in range(4)} == {1, 2}
    assert rlvr_gym.make("rlvr/ToolDepth-v0", depths=[5]).get_task(0).metadata["depth"] == 5
    unseen = rlvr_gym.make("rlvr/ToolDepthUnseen-v0")
    assert unseen.get_task(0).id == "tools/eval/0" and unseen.get_task(0).metadata["tools_pool"] == "unseen"
    legacy = ToolDepthEnv(split="unseen")  # the old spelling of the held-out pool still works
    assert legacy.get_task(0).model_dump() == unseen.get_task(0).model_dump()


def test_fuzzed_actions_never_raise_from_step():
    env = ToolDepthEnv()
    rng = random.Random(0)
    task = env.get_task(5)
    reference = task.reference_actions[0]
    fragments = [
        "<tool_call>",
        "</tool_call>",
        "<think>",
        "</think>",
        '{"name": ',
        '"arguments": ',
        "{",
        "}",
        "[",
        "]",
        '"API_RESPONSE_9"',
        "null",
        "1e999",
        '"x"' * 50,
        "```json\n",
        "\x00",
        '{"0": {"a": 1}}',
        "Answer: ",
        "\ud800",
        "answer",
    ]
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
                rng.choice(task.metadata["tool_names"] + ["zzz", ""]),
                rng.choice(["1", "[]", '"' + "y" * 100_000 + '"', "{}", "true", '"API_RESPONSE_0"']),
            )
        else:
            action = format_tool_calls(
                [
                    ToolCall(
                        name=rng.choice(["get_capital", "??", "a" * 5000]),
                        arguments=rng.choice(["{}", "[1]", "nope", '{"q": 1}']),
                    )
                ]
            )
        env.reset(options={"task_index": 5})
        for _ in range(2):
            obs, reward, terminated, truncated, info = env.step(action)
            assert isinstance(obs, list) and isinstance(reward, float)
            if terminated or truncated:
                assert 0.0 <= info["verdict"].reward <= 1.0
                break


STEP_ADVERSARIAL = {
    "newlines": "\n" * 1_000_000,
    "backticks": "`" * 1_000_000,
    "brackets": "[" * 500_000 + "]" * 500_000,
    "braces": "{" * 1_000_000,
    "repeated_tags": "<tool_call>" * 90_000,
    "answer_words": "answer " * 140_000,
    "answer_lines": "Answer: 1\n" * 100_000,
    "answer_in_fences": "```\nAnswer: 1\n" * 70_000,
    "many_calls": hermes("count_words", text="a " * 7_000) * 64,
}


@pytest.mark.parametrize("name", sorted(STEP_ADVERSARIAL))
@pytest.mark.parametrize("env_id", ["rlvr/ToolDepth-v0", "rlvr/BFCL-v0"])
def test_one_megabyte_adversarial_action_steps_under_100_ms(env_id, name):
    import time

    env = rlvr_gym.make(env_id)
    best = float("inf")
    for _ in range(3):  # best of 3: the machine may be busy
        env.reset(options={"task_index": 0})
        start = time.perf_counter()
        result = env.step_result(STEP_ADVERSARIAL[name])
        best = min(best, time.perf_counter() - start)
        assert result.reward == 0.0
    assert best < 0.1, f"{env_id} {name}: {best * 1000:.0f} ms"
