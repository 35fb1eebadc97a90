import pytest
from gymnasium.utils.env_checker import check_env

import rlvr_gym


@pytest.fixture
def env(echo_env_id):
    return rlvr_gym.make(echo_env_id, max_attempts=3, attempt_decay=0.5)


def test_check_env(env):
    check_env(env, skip_render_check=True)


def test_same_seed_same_task_and_verdict(env, echo_env_id):
    other = rlvr_gym.make(echo_env_id, max_attempts=3)
    for seed in (0, 7, 123456):
        obs_a, info_a = env.reset(seed=seed)
        obs_b, info_b = other.reset(seed=seed)
        assert obs_a == obs_b and info_a["task_id"] == info_b["task_id"]
        assert env.step("x")[:4] == other.step("x")[:4]


def test_attempts_feedback_and_decay(env):
    env.reset(options={"task_index": 4})
    obs, reward, terminated, truncated, info = env.step("5")
    assert not terminated and reward == 0.0 and "2 attempt(s) left" in obs[0]["content"]
    obs, reward, terminated, truncated, info = env.step("4")
    assert terminated and reward == 0.5 and info["verdict"].passed
    # stepping a finished episode is answered, not a crash
    _, reward, terminated, _, info = env.step("4")
    assert terminated and reward == 0.0 and info["valid_action"] is False


def test_any_string_is_a_valid_step(env):
    for action in ["", "\x00\xff", "💥" * 10000, "a" * 1_000_000, 12345]:
        env.reset(options={"task_index": 1})
        env.step(action)


def test_truncation_gives_verdict(echo_env_id):
    env = rlvr_gym.make(echo_env_id, max_attempts=2)
    env.reset(options={"task_index": 1})
    env.step("no")
    _, _, terminated, truncated, info = env.step("no")
    assert terminated and not info["verdict"].passed


def test_verify_offline_matches_env(env):
    task = env.get_task(9)
    assert env.verify(task, ["8", "9"]).reward == 0.5
    assert env.verify(task.model_dump(), ["9"]).passed
    assert not env.verify(task, []).passed


def test_task_index_out_of_range(echo_env_id):
    env = rlvr_gym.make(echo_env_id, size=3)
    with pytest.raises(IndexError):
        env.reset(options={"task_index": 3})
    assert env.reset(seed=5)[1]["task_index"] == 2  # seeds map onto the finite task list
