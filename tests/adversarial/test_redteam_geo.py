"""Red team, GeoX (issue #43): answers made of text that string methods and number parsers disagree about.

`env.step` and `verify` must never raise on any string, and no spelling other than the plain ASCII one may stand
for an answer (a digit of another script is a distinct answer, as is a label in look-alike letters).
"""

from __future__ import annotations

import pytest

import rlvr_gym
from rlvr_gym.envs.geo.tasks import GeoTasks
from rlvr_gym.envs.geo.verifier import verify

NUMERALS = ["²", "③", "３", "٣", "३", "𝟑", "𐩃", "Ⅻ", "nan", "NaN", "inf", "-Infinity", "1e999", "9" * 5000,
            "1" + "0" * 100_000, "0." + "3" * 5000, "1_000", "0x1F", "-0.0"]  # fmt: skip
CONTROLS = ["\u202e", "\u2066x\u2069", "\u200b", "\ufeff"]
ENVS = ["rlvr/GeoX-v0", "rlvr/GeoX-Abduction-v0", "rlvr/GeoX-Induction-v0", "rlvr/GeoX-Tools-v0",
        "rlvr/GeoX-Propose-v0"]  # fmt: skip
SCRIPTS = {  # digits 0-9 of other scripts: `str.isdigit` accepts them all, int() and float() only some
    "superscript": "⁰¹²³⁴⁵⁶⁷⁸⁹",
    "circled": "⓪①②③④⑤⑥⑦⑧⑨",
    "fullwidth": "０１２３４５６７８９",
    "arabic_indic": "٠١٢٣٤٥٦٧٨٩",
    "devanagari": "०१२३४५६७८९",
    "math_bold": "𝟎𝟏𝟐𝟑𝟒𝟓𝟔𝟕𝟖𝟗",
    "thai": "๐๑๒๓๔๕๖๗๘๙",
}


def _in(script: str, value: int) -> str:
    return "".join(SCRIPTS[script][int(d)] for d in str(value))


def _first(mode: str, keep) -> object:
    source = GeoTasks(seed=0, mode=mode)
    return next(t for t in (source.task(i) for i in range(200)) if keep(t.ground_truth))


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_a_number_hole_written_in_another_script_neither_raises_nor_passes(script):
    task = _first("abduction", lambda truth: truth["hole"]["kind"] == "num")
    verdict = verify(task, [f"ANSWER: {_in(script, task.ground_truth['hole']['answer'])}"])
    assert not verdict.passed and verdict.reward == 0.0


@pytest.mark.parametrize("script", ["arabic_indic", "devanagari", "fullwidth", "math_bold", "thai"])
def test_the_right_count_in_another_script_is_not_the_answer(script):  # decimal digits: float() reads them
    task = _first("deduction", lambda truth: truth["unit"] == "count" and truth["value"] > 0)
    value = task.ground_truth["value"]
    assert verify(task, [f"ANSWER: {value}"]).passed
    assert not verify(task, [f"ANSWER: {_in(script, value)}"]).passed


def test_a_look_alike_label_commits_no_answer():
    task = _first("deduction", lambda truth: truth["unit"] == "count" and truth["value"] > 0)
    assert not verify(task, [f"ANſWER: {task.ground_truth['value']}"]).passed  # "ſ".upper() == "S"


def test_no_string_makes_a_geo_env_raise():
    for env_id in ENVS:
        env = rlvr_gym.make(env_id)
        env.reset(options={"task_index": 0})
        task = env.task
        reference = (task.reference_actions or [""])[0]
        tokens = [*NUMERALS, *CONTROLS, *(_in(script, 40) for script in SCRIPTS)]
        actions = [*tokens, *(f"ANSWER: {t}" for t in tokens), *(reference.replace("0", t) for t in tokens[:8]),
                   'ANSWER: ["near", ["objects", "tree"], ["largest", ["objects", "building"]], NaN]',
                   'ANSWER: ["buffer", ["tile"], 1e999]', "ANSWER: [" + "9" * 4400 + "]"]  # fmt: skip
        for action in actions:
            env.reset(options={"task_index": 0})
            env.step(action)  # must not raise
            assert env.verify(task, [action]).reward <= 1.0


def test_check_env_fuzz_finds_a_parser_that_trusts_isdigit():
    # The bug class, in any env: check-env's fuzz stage puts Unicode numerals where the prompt's answer goes.
    from rlvr_gym import AnswerEnv, Task, TaskSource, Verdict
    from rlvr_gym.checks import _fuzz_steps, prompt_text
    from rlvr_gym.payloads import payload_actions

    class Tasks(TaskSource):
        family = "isdigit"

        def task(self, index: int) -> Task:
            return self.make_task(index, prompt="Reply `ANSWER: <n>` with 40.", ground_truth=40,
                                  reference_actions=["ANSWER: 40"], difficulty=1)  # fmt: skip

    class TrustsIsdigit(AnswerEnv):
        def __init__(self) -> None:
            super().__init__()
            self.source = Tasks()

        def score_answer(self, task: Task, text: str) -> Verdict:
            body = text.removeprefix("ANSWER: ")
            ok = body.isdigit() and int(body) == task.ground_truth  # int("²") raises
            return Verdict(reward=float(ok), passed=ok)

    env, errors, slow = TrustsIsdigit(), [], []
    task = env.source.task(0)
    _fuzz_steps(env, 0, payload_actions(prompt_text(task), task.reference_actions[0]), errors, slow)
    assert any("superscript" in e and "ValueError" in e for e in errors), errors
