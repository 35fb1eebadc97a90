"""Math envs through the registry: check_env, determinism, oracle actions, multi-attempt feedback and decay."""

from __future__ import annotations

import random
import string

import pytest
from gymnasium.utils.env_checker import check_env

import rlvr_gym
from rlvr_gym import Task
from rlvr_gym.envs.math.env import MathDatasetEnv, MathEnv
from rlvr_gym.envs.math.tasks import MathTasks

MATH_ENVS = ["rlvr/Math-v0", "rlvr/MathArithmetic-v0", "rlvr/MathStarter-v0", "rlvr/MathDataset-v0"]


def test_registered() -> None:
    ids = {info.id: info for info in rlvr_gym.list_envs()}
    for env_id in MATH_ENVS:
        assert env_id in ids and ids[env_id].family == "math"
    env = rlvr_gym.make("rlvr/Math-v0")
    assert isinstance(env, MathEnv) and isinstance(env.source, MathTasks)
    assert env.source.config.difficulty == 3 and len(env.source.config.families) == 7
    easy = rlvr_gym.make("rlvr/MathArithmetic-v0")
    assert easy.source.config.families == {"arithmetic": 1.0} and easy.source.config.difficulty == 1
    starter = rlvr_gym.make("rlvr/MathStarter-v0")
    assert starter.source.config.difficulty == 1 and starter.source.config.prompt_style == "one_shot"
    starter.reset(options={"task_index": 0})
    assert [m.role for m in starter.task.prompt_messages()] == ["user", "assistant", "user"]
    dataset = rlvr_gym.make("rlvr/MathDataset-v0")
    assert (
        isinstance(dataset, MathDatasetEnv)
        and dataset.num_tasks + rlvr_gym.make("rlvr/MathDataset-v0", split="eval").num_tasks == 20
    )


@pytest.mark.parametrize("env_id", MATH_ENVS)
def test_check_env(env_id: str) -> None:
    check_env(rlvr_gym.make(env_id), skip_render_check=True)
    check_env(rlvr_gym.make(env_id, max_attempts=3), skip_render_check=True)


@pytest.mark.parametrize("env_id", MATH_ENVS)
def test_reference_action_solves_every_sampled_task(env_id: str) -> None:
    env = rlvr_gym.make(env_id)
    for seed in range(25):
        _, info = env.reset(seed=seed)
        assert info["task_id"] == env.task.id
        _, reward, terminated, truncated, step_info = env.step(env.task.reference_actions[0])
        assert (reward, terminated, truncated) == (1.0, True, False)
        assert step_info["verdict"].passed and step_info["valid_action"]
        assert env.task.id == f"math/train/{env.task_index}"


@pytest.mark.parametrize("env_id", MATH_ENVS)
def test_same_seed_same_task_and_verdict(env_id: str) -> None:
    first, second = rlvr_gym.make(env_id), rlvr_gym.make(env_id)
    for seed in (0, 1, 16, 123456):
        obs_a, info_a = first.reset(seed=seed)
        obs_b, info_b = second.reset(seed=seed)
        assert obs_a == obs_b and info_a["task_id"] == info_b["task_id"]
        action = f"I think it is \\boxed{{{seed % 7}}}"
        assert first.step(action)[4]["verdict"] == second.step(action)[4]["verdict"]
    by_index = rlvr_gym.make(env_id)
    by_index.reset(options={"task_index": 3})
    first.reset(options={"task_index": 3})
    assert by_index.task == first.task


def test_generator_seed_changes_tasks() -> None:
    a, b = rlvr_gym.make("rlvr/Math-v0", seed=1), rlvr_gym.make("rlvr/Math-v0", seed=2)
    a.reset(seed=4)
    b.reset(seed=4)
    assert a.task.id == b.task.id == "math/train/4" and a.task.prompt != b.task.prompt


def test_num_tasks() -> None:
    assert rlvr_gym.make("rlvr/Math-v0").num_tasks is None
    sized = rlvr_gym.make("rlvr/Math-v0", size=5)
    assert sized.num_tasks == 5
    sized.reset(seed=12)
    assert sized.task_index == 12 % 5


def test_multi_attempt_feedback_and_decay() -> None:
    env = rlvr_gym.make("rlvr/MathArithmetic-v0", max_attempts=3, attempt_decay=0.5)
    env.reset(seed=0)
    gold = int(env.task.ground_truth)
    obs, reward, terminated, truncated, info = env.step(f"\\boxed{{{gold + 1}}}")
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert "not correct" in obs[0]["content"] and "2 attempt(s) left" in obs[0]["content"]
    assert str(gold) not in obs[0]["content"].replace(str(gold + 1), "")
    assert info["valid_action"] and not info["attempt_verdict"].passed
    obs, reward, terminated, truncated, info = env.step("no idea")
    assert not terminated and not info["valid_action"] and "\\boxed{}" in obs[0]["content"]
    assert not info["attempt_verdict"].valid
    obs, reward, terminated, truncated, info = env.step(f"\\boxed{{{gold}}}")
    assert terminated and reward == pytest.approx(0.25)
    assert info["verdict"].passed and info["verdict"].components["attempts"] == 3.0


def test_all_attempts_wrong_ends_with_failed_verdict() -> None:
    env = rlvr_gym.make("rlvr/Math-v0", max_attempts=2, attempt_decay=0.8)
    env.reset(seed=3)
    env.step("\\boxed{garbage}")
    _, reward, terminated, truncated, info = env.step("still \\boxed{nothing}")
    assert reward == 0.0 and terminated and not truncated and not info["verdict"].passed


def test_offline_verify_matches_stepping() -> None:
    env = rlvr_gym.make("rlvr/Math-v0", max_attempts=2, attempt_decay=0.5)
    env.reset(seed=8)
    task = env.task
    verdict = env.verify(task.model_dump(), ["\\boxed{wrong}", task.reference_actions[0]])
    assert verdict.passed and verdict.reward == pytest.approx(0.5)


def test_question_echo_in_env_does_not_score() -> None:
    question = "Tim wrote \\boxed{42} on the board. What is 6 × 7?"
    task = Task(
        id="echo",
        prompt=f"{question}\n\nPut your final answer in \\boxed{{}}.",
        ground_truth="42",
        metadata={"question": question, "index": 0},
    )
    env = rlvr_gym.make("rlvr/Math-v0")
    env.reset(options={"task": task})
    _, reward, _, _, info = env.step(f"{task.prompt}\nI am not sure.")
    assert reward == 0.0 and not info["valid_action"]
    env.reset(options={"task": task})
    assert env.step(f"{task.prompt}\n6 × 7 = 42, so \\boxed{{42}}")[1] == 1.0


def test_format_weight_kwarg() -> None:
    env = rlvr_gym.make("rlvr/MathArithmetic-v0", format_weight=0.2, correct_weight=0.8)
    env.reset(seed=1)
    assert env.step("\\boxed{-1}")[1] == pytest.approx(0.2)
    env.reset(seed=1)
    assert env.step("no box")[1] == 0.0
    env.reset(seed=1)
    assert env.step(env.task.reference_actions[0])[1] == pytest.approx(1.0)


@pytest.mark.parametrize("env_id", MATH_ENVS)
def test_garbage_actions_never_raise(env_id: str) -> None:
    env = rlvr_gym.make(env_id, max_attempts=2)
    rng = random.Random(0)
    alphabet = string.printable + "\\{}$\udcff\x00é→∑😀"
    actions = ["", " ", "\\boxed{", "}" * 50, "\\boxed{}" * 40, "<answer>", "\x00" * 100, "\udcff\ud800", "9" * 100_000]
    actions += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 300))) for _ in range(30)]
    for action in actions:
        env.reset(seed=rng.randint(0, 1000))
        _, reward, terminated, truncated, info = env.step(action)
        assert 0.0 <= reward <= 1.0 and isinstance(info["valid_action"], bool)
    env.reset(seed=0)
    env.step(12345)  # a non-str action is coerced by the base class


def test_kwargs_of_the_old_envs_still_work() -> None:
    env = rlvr_gym.make(
        "rlvr/Math-v0",
        families={"linear": 2, "modular": 1},
        difficulty=4,
        seed=7,
        size=100,
        max_attempts=3,
        attempt_decay=0.5,
        format_weight=0.0,
        config={"prompt_style": "plain"},
    )
    assert env.num_tasks == 100 and env.source.config.families == {"linear": 2.0, "modular": 1.0}
    with pytest.raises(ValueError):
        rlvr_gym.make("rlvr/Math-v0", multiple_answers="last")  # hedging with several boxes can never pay


def test_train_and_eval_splits() -> None:
    train, held_out = rlvr_gym.make("rlvr/Math-v0"), rlvr_gym.make("rlvr/Math-v0", split="eval")
    train.reset(options={"task_index": 5})
    held_out.reset(options={"task_index": 5})
    assert train.task.id == "math/train/5" and held_out.task.id == "math/eval/5"
    assert train.task.metadata["question"] != held_out.task.metadata["question"]


def test_wrong_answers_fail_in_the_env() -> None:
    env = rlvr_gym.make("rlvr/Math-v0", difficulty=5)
    for index in range(20):
        env.reset(options={"task_index": index})
        for trajectory in env.wrong_answers(env.task, random.Random(index)):
            assert not env.verify(env.task, trajectory).passed, (env.task.ground_truth, trajectory)


@pytest.mark.parametrize("env_id", MATH_ENVS)
def test_one_megabyte_adversarial_steps_under_100_ms(env_id: str) -> None:
    """Issue #14 item 2: every parser is linear or bounded, through the env's own step."""
    import time

    env = rlvr_gym.make(env_id)
    actions = [
        "\n" * 1_000_000,
        "`" * 1_000_000,
        "{" * 1_000_000,
        "\\boxed{" * 142_857,
        "<think>" * 142_857,
        "[" * 500_000 + "]" * 500_000,
        '{"a":' * 200_000,
    ]
    for action in actions:
        times = []
        for _ in range(3):  # best of 3: the machine is shared
            env.reset(options={"task_index": 0})
            start = time.perf_counter()
            _, reward, *_ = env.step(action)
            times.append(time.perf_counter() - start)
            assert reward == 0.0
        assert min(times) < 0.1, (action[:10], min(times))


def test_one_shot_prompt_example_echo_commits_nothing() -> None:
    env = rlvr_gym.make("rlvr/MathArithmetic-v0", prompt_style="one_shot")
    for index in range(10):
        env.reset(options={"task_index": index})
        example = env.task.prompt[1].content
        _, reward, _, _, info = env.step(example)
        assert reward == 0.0 and not info["valid_action"]
