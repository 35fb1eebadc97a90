"""The text env: oracle, near misses, invalid actions, observations, limits, bad input."""

import random
import time

from rlvr_gym import make
from rlvr_gym.envs.webshop.baselines import baseline_summary
from rlvr_gym.envs.webshop.shop import parse_action


def test_oracle_reaches_full_marks_and_random_does_not(env):
    summary = baseline_summary(env, 100)
    assert summary["oracle_success"] >= 0.95
    assert summary["random_success"] < 0.1 and summary["random_mean_reward"] < 0.5


def test_wrong_answers_never_pass_and_cover_the_near_misses(env):
    kinds = set()
    for i in range(30):
        env.reset(options={"task_index": i})
        task = env.task
        for wrong in env.wrong_answers(task, random.Random(i)):
            verdict = env.verify(task, wrong)
            assert not verdict.passed and verdict.reward < 1.0
            c = verdict.components
            if c.get("purchased"):
                kinds |= {k for k in ("attribute_score", "option_score", "price_score", "r_type") if c[k] < 1}
    assert kinds == {"attribute_score", "option_score", "price_score", "r_type"}


def test_episode_walk_and_observation_modes():
    env = make("rlvr/WebShop-v0", observation_mode="text_rich")
    obs, _ = env.reset(options={"task_index": 3})
    assert "[button] Search [button_]" in obs[0]["content"]
    actions = env.task.reference_actions
    for action in actions[:-1]:
        result = env.step_result(action)
        assert result.valid_action and not result.terminated
    assert "[clicked button]" in result.observation[0].text() or len(env.task.ground_truth["options"]) == 0
    result = env.step_result(actions[-1])
    assert result.terminated and result.reward == 1.0 and result.verdict.components["purchased"] == 1.0


def test_invalid_actions_are_typed_no_ops(env):
    env.reset(options={"task_index": 0})
    before = env.session.page()
    for action in (
        "click[Buy Now]",
        "click[nothing here]",
        "buy[x]",
        "search[]",
        "search[a]\nclick[b]",
        "",
        "héllo wörld 😀",
        "\ud800\x00",
        "search[" + "x " * 600_000 + "]",
        "[" * 1_000_000,
    ):
        result = env.step_result(action)
        assert not result.valid_action and not result.terminated
        assert env.session.page() == before
        env.reset(options={"task_index": 0})
    result = env.step_result("search[ünïcödé 😀 shampoo]")
    assert result.valid_action and env.session.kind == "results"
    assert not env.step_result("search[again]").valid_action  # no search bar on the results page


def test_parser_is_bounded_on_megabyte_inputs():
    for text in ("\n" * 1_000_000, "`" * 1_000_000, "[" * 500_000 + "]" * 500_000, "click[" + "a" * 1_000_000 + "]"):
        t0 = time.perf_counter()
        assert parse_action(text) is None
        assert time.perf_counter() - t0 < 0.1


def test_step_limit_ends_without_purchase():
    env = make("rlvr/WebShop-v0", max_turns=3)
    env.reset(options={"task_index": 1})
    for _ in range(3):
        result = env.step_result("click[nowhere]")
    assert result.truncated and result.verdict.reward == 0.0 and result.verdict.components["purchased"] == 0.0


def test_paging_and_sub_pages(env):
    env.reset(options={"task_index": 2})
    env.step_result("search[shampoo]")
    assert env.step_result("click[Next >]").valid_action and env.session.page_num == 2
    assert env.step_result("click[< Prev]").valid_action and env.session.page_num == 1
    asin = env.session.results[0]
    env.step_result(f"click[{asin.lower()}]")
    assert env.session.kind == "item"
    assert env.step_result("click[Features]").valid_action and env.session.kind == "sub_page"
    assert env.step_result("click[< Prev]").valid_action and env.session.kind == "item"
    assert env.step_result("click[Back to Search]").valid_action and env.session.kind == "search"


def test_splits_are_disjoint():
    train = make("rlvr/WebShop-v0", split="train")
    evals = make("rlvr/WebShop-v0", split="eval")
    a = {train.get_task(i).metadata["instruction"] for i in range(200)}
    b = {evals.get_task(i).metadata["instruction"] for i in range(200)}
    assert not a & b and len(a) == 200 and len(b) == 200  # no repeats in the first 200 of either split
