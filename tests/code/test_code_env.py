"""The code envs end to end: registration, check_env, run-then-submit, garbage, determinism, offline verify."""

from __future__ import annotations

import pytest
from gymnasium.utils.env_checker import check_env

import rlvr_gym
from rlvr_gym.envs.code import verifier
from rlvr_gym.envs.code.actions import format_run, format_submission
from rlvr_gym.envs.code.env import CodeGenEnv, HumanEvalEnv, MBPPEnv

ENV_IDS = ["rlvr/HumanEval-v0", "rlvr/MBPP-v0", "rlvr/CodeGen-v0"]


@pytest.fixture
def codegen(executor):
    return CodeGenEnv(executor=executor, max_runs=2)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_registered_and_check_env(env_id, executor):
    assert env_id in {info.id for info in rlvr_gym.list_envs()}
    env = rlvr_gym.make(env_id, executor=executor)
    check_env(env, skip_render_check=True)
    obs, info = env.reset(seed=1)
    assert "<submit>" in obs[0]["content"] and "<run>" in obs[0]["content"]
    assert info["task_id"] == env.task.id


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_reference_actions_solve_tasks(env_id, executor):
    env = rlvr_gym.make(env_id, executor=executor)
    for index in range(3):
        env.reset(options={"task_index": index})
        *_, terminated, _, info = env.step(env.task.reference_actions[0])
        assert terminated and info["verdict"].passed, (env.task.id, info["verdict"])
        assert info["verdict"].reward == pytest.approx(1.0)


def test_run_then_submit(codegen):
    obs, _ = codegen.reset(options={"task_index": 0})
    entry = codegen.task.metadata["entry_point"]
    reference = codegen.task.ground_truth["reference_solution"]
    obs, reward, terminated, truncated, info = codegen.step(
        format_run(
            reference + f"\nprint('ran', {entry}(12) is not None)\nimport sys\nprint('to stderr', file=sys.stderr)"
        )
    )
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert info["action_kind"] == "run" and info["valid_action"] and info["run_status"] == "ok"
    assert "ran True" in obs[0]["content"] and "to stderr" in obs[0]["content"]
    obs, reward, terminated, _, info = codegen.step("Done.\n" + format_submission(reference))
    assert terminated and info["verdict"].passed and reward == pytest.approx(1.0)
    assert info["verdict"].components["tests"] == 1.0 and info["penalty_spans"] == []


def test_run_shows_errors_and_the_limit_is_enforced(codegen):
    codegen.reset(options={"task_index": 1})
    obs, *_, info = codegen.step("<run>raise ValueError('boom')</run>")
    assert "ValueError: boom" in obs[0]["content"] and info["run_status"] == "error"
    codegen.step("<run>print(1)</run>")
    obs, reward, terminated, truncated, info = codegen.step("<run>print(2)</run>")
    assert not info["valid_action"] and "No runs left" in obs[0]["content"]
    assert (reward, terminated) == (0.0, False)
    obs, reward, terminated, truncated, info = codegen.step("<run>print(3)</run>")
    assert truncated and not terminated and info["verdict"].reward == 0.0  # max_turns = max_runs + 2


@pytest.mark.parametrize(
    "garbage", ["", "   ", "<submit></submit>", "<run>\n```python\n```\n</run>", "\x00\x01", "😀" * 50]
)
def test_garbage_actions_are_invalid_steps(codegen, garbage):
    codegen.reset(options={"task_index": 2})
    obs, reward, terminated, truncated, info = codegen.step(garbage)
    assert info["valid_action"] is False and reward == 0.0 and not terminated
    assert "No code found" in obs[0]["content"]


def test_hostile_text_never_crashes(codegen):
    for action in ("<run>print('\ud800')</run>", "<submit>def f():\n    return '\ud800'\n</submit>", "\x00" * 1000):
        codegen.reset(options={"task_index": 3})
        result = codegen.step_result(action)
        assert result.reward == 0.0
        if result.verdict is not None:
            assert not result.verdict.valid and not result.verdict.passed
    codegen.reset(options={"task_index": 3})
    assert "not valid Unicode" in codegen.step_result("<run>print('\ud800')</run>").observation[0].content


def test_unparseable_submission_ends_with_zero(codegen):
    codegen.reset(options={"task_index": 2})
    *_, terminated, _, info = codegen.step("<submit>I think the answer is: def f(:</submit>")
    assert terminated and info["verdict"].reward == 0.0 and not info["verdict"].passed


def test_code_passing_no_test_earns_nothing_but_components_are_reported(codegen):
    codegen.reset(options={"task_index": 0})
    entry = codegen.task.metadata["entry_point"]
    *_, info = codegen.step(format_submission(f"def {entry}(*args):\n    return eval('None')\n"))
    verdict = info["verdict"]
    assert not verdict.passed and verdict.valid and verdict.reward == 0.0
    assert verdict.components["syntax"] == 1.0 and verdict.components["security"] < 1.0
    assert any(span["kind"] == "security" for span in info["penalty_spans"])


PARTIAL_LONGEST = "def longest(strings):\n    return strings[0] if strings else None\n"  # HumanEval/12: 4 of 6


def test_partial_solution_gets_partial_reward_beyond_trivial_programs(executor):
    env = HumanEvalEnv(executor=executor)
    env.reset(options={"task_index": 12})
    verdict = env.step(format_submission(PARTIAL_LONGEST))[4]["verdict"]
    assert verdict.components["tests"] == pytest.approx(4 / 6) and verdict.components["earned"] == 0.5
    assert verdict.reward == pytest.approx(0.5 * 0.99) and not verdict.passed  # style 0.9: one finding


@pytest.mark.parametrize("body", ["return True", "return None", "return []", "return strings"])
def test_a_trivial_body_earns_nothing_even_where_it_passes_tests(executor, body):
    env = HumanEvalEnv(executor=executor)
    task = env.get_task(0 if body == "return True" else 12)
    entry = task.ground_truth["entry_point"]
    verdict = env.verify(task, [format_submission(f"def {entry}(*args):\n    {body.replace('strings', 'args[0]')}")])
    assert verdict.reward == 0.0 and verdict.components["earned"] == 0.0
    if body == "return True":  # has_close_elements: True passes 4 of 7 tests, and still earns nothing
        assert verdict.components["tests"] > 0.5


def test_determinism(executor):
    a, b = CodeGenEnv(executor=executor, seed=5), CodeGenEnv(executor=executor, seed=5)
    obs_a, _ = a.reset(seed=11)
    obs_b, _ = b.reset(seed=11)
    assert obs_a == obs_b and a.task == b.task
    action = format_submission("def f(x):\n    return x\n")
    verdict_a = a.step(action)[4]["verdict"]
    verdict_b = b.step(action)[4]["verdict"]
    assert verdict_a == verdict_b
    assert CodeGenEnv(executor=executor, seed=6).get_task(11) != a.task


def test_offline_verify_matches_the_env(executor):
    env = MBPPEnv(executor=executor)
    env.reset(options={"task_index": 4})
    actions = ["<run>print(1)</run>", env.task.reference_actions[0]]
    online = [env.step(a) for a in actions][-1][4]["verdict"]
    offline = env.verify(env.task.model_dump(), actions)
    assert online == offline and offline.passed
    assert verifier.verify(env.task.model_dump(mode="json"), actions) == offline  # no env needed, JSON task
    assert env.verify(env.task, ["<run>print(1)</run>"]).reward == 0.0


def test_weights_are_configurable(executor):
    env = HumanEvalEnv(
        executor=executor, weights={"tests": 1.0, "syntax": 0.0, "executable": 0.0, "style": 0.0, "security": 0.0}
    )
    env.reset(options={"task_index": 12})
    verdict = env.step(format_submission(PARTIAL_LONGEST))[4]["verdict"]
    assert verdict.reward == pytest.approx(verdict.components["earned"]) and 0 < verdict.reward < 1
    with pytest.raises(ValueError):
        HumanEvalEnv(executor=executor, weights={"nonsense": 1.0})
