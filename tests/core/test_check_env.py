"""`rlvr-gym check-env` catches each class of broken env, and the `new-env` scaffold passes it out of the box."""

from __future__ import annotations

import importlib
import sys

import broken_envs  # a sibling module on sys.path, importable by the check's child processes too
import pytest

import rlvr_gym
from rlvr_gym import floor
from rlvr_gym.checks import FAIL, PASS, main, run_checks
from rlvr_gym.scaffold import scaffold


def _register(name: str) -> str:
    env_id = f"rlvr/Broken{name}-v0"
    rlvr_gym.register(env_id, getattr(broken_envs, name), family="brokenadd")
    return env_id


def _status(env_id: str, *checks: str) -> dict[str, str]:
    report = run_checks(env_id, tasks=4, checks=checks)
    return {r.check: r.status for r in report.results}


def test_a_correct_env_passes_every_check():
    report = run_checks(_register("GoodEnv"), tasks=6)
    assert report.ok, [(r.check, r.detail) for r in report.results if r.status != PASS]
    assert {r.check for r in report.results} == {"oracle", "determinism", "wrong_answers", "hacks", "fuzz", "splits",
                                                 "verify_time", "reward_floor"}


def test_a_shotgun_answer_is_caught():
    assert _status(_register("ContainsEnv"), "hacks")["hacks"] == FAIL


def test_a_quadratic_parser_is_caught_without_hanging_the_check():
    assert _status(_register("QuadraticEnv"), "fuzz")["fuzz"] == FAIL


def test_salted_hash_tasks_are_caught():
    assert _status(_register("SaltedEnv"), "determinism")["determinism"] == FAIL


def test_a_family_without_wrong_answers_fails():
    assert _status(_register("NoWrongAnswersEnv"), "wrong_answers")["wrong_answers"] == FAIL


@pytest.mark.parametrize("name", ["FormatCreditEnv", "ValidityCreditEnv"])
def test_a_reward_floor_is_caught_by_template_echoes_and_family_policies(name):
    report = run_checks(_register(name), tasks=3, checks=["reward_floor"])
    result = report.results[0]
    assert result.status == FAIL and result.figures["best"] > 0.05 * result.figures["oracle_mean"], result.detail
    assert ("template_echo:label:answer" if name == "FormatCreditEnv" else "family:no_op") in result.detail


def test_template_echo_fills_the_prompts_own_answer_slots():
    prompt = "Reply `ANSWER: <value>` or \\boxed{} or <answer>...</answer>, e.g. 'R R D'.\n```output\n<value>\n```"
    actions = floor.generic_actions(prompt)
    assert actions["template_echo:label:answer:inner=N"] == "ANSWER: N"
    assert actions["template_echo:boxed:body=x"] == "\\boxed{x}"
    assert actions["template_echo:tag:answer:inner=answer"] == "<answer>answer</answer>"
    assert actions["template_echo:fence:output:body=0"] == "```output\n0\n```"
    assert actions["template_echo:example:as_is"] == "R R D"
    assert actions["template_echo:all_slots:body=N"].startswith("```output\nN\n```\n<answer>N</answer>\n")


def test_declared_exceptions_are_reported_not_hidden(monkeypatch):
    env_id = _register("ContainsEnv")
    monkeypatch.setattr(broken_envs.ContainsEnv, "check_exceptions", {"hacks": "demo"})
    report = run_checks(env_id, tasks=3, checks=["hacks"])
    assert report.results[0].status == "exception" and "demo" in report.results[0].detail


def test_cli_exit_code(capsys):
    assert main([_register("ContainsEnv"), "--tasks", "3", "--check", "hacks"]) == 1
    assert main([_register("GoodEnv"), "--tasks", "3", "--check", "oracle", "--json"]) == 0
    assert '"ok": true' in capsys.readouterr().out


def test_new_env_scaffold_passes_check_env(tmp_path, monkeypatch):
    files = scaffold("word_sum", tmp_path)
    root = files[0].parent
    family_lines = sum(len(p.read_text().splitlines()) for p in files if p.parent.name == "rlvr_word_sum")
    assert family_lines <= 150
    monkeypatch.syspath_prepend(str(root))
    module = importlib.import_module("rlvr_word_sum")
    module.register_envs()
    report = run_checks("rlvr/WordSum-v0", tasks=8)
    assert report.ok, [(r.check, r.detail) for r in report.results if r.status != PASS]
    with pytest.raises(FileExistsError):
        scaffold("word_sum", tmp_path)
    sys.modules.pop("rlvr_word_sum", None)
