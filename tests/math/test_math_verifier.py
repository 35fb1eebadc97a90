"""The extraction rule and the verdict: last committed box outside reasoning/code/quotes, ambiguity is invalid,
task constraints are a named component, near misses and hostile outputs never pass, 1 MB inputs are fast."""

from __future__ import annotations

import random
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from rlvr_gym import Task
from rlvr_gym.envs.math.extract import committed_answers
from rlvr_gym.envs.math.verifier import verify, wrong_answers


def task(gold: str, question: str = "Compute it.", **meta: str) -> Task:
    return Task(
        id="math/train/0",
        prompt=f"{question}\n\nPut your final answer in \\boxed{{}}.",
        ground_truth=gold,
        metadata={"question": question, "index": 0, **meta},
    )


def judge(output: str, gold: str, **meta: str):
    return verify(task(gold, **meta), [output])


PASS = [
    ("\\boxed{\\dfrac12}", "1/2"),
    ("So \\boxed{0.5}.", "1/2"),
    ("\\boxed{\\boxed{3}}", "3"),
    ("\\boxed{42}\nThus the total is \\boxed{42}.", "42"),
    ("\\boxed{0.5}, or equivalently \\boxed{\\frac12}", "1/2"),
    ("\\boxed 7", "7"),
    ("\\fbox{9}", "9"),
    ("<think>maybe \\boxed{5}</think> The answer is \\boxed{6}.", "6"),
    ("thinking... \\boxed{5} </think>\n\\boxed{6}", "6"),  # an implicit think opening
    ("```python\nprint('\\boxed{5}')\n```\nSo \\boxed{6}.", "6"),
    ("The form is `\\boxed{5}`; here: \\boxed{6}", "6"),
    ('Write it like "\\boxed{5}". Mine: \\boxed{6}', "6"),
    ("> Example: \\boxed{5}\n\n\\boxed{6}", "6"),
    ("\\boxed{1 1/2}", "3/2"),
    ("\\boxed{1.2 \\times 10^{3}}", "1200"),
    ("\\boxed{0.\\overline{3}}", "1/3"),
    ("\\boxed{½}", "1/2"),
    ("\\boxed{−3}", "-3"),
    ("\\boxed{1,000}", "1000"),
    ("\\boxed{25\\%}", "1/4"),
    ("\\boxed{x = 4}", "4"),
    ("\\boxed{\\frac{\\sqrt{3}}{2}}", "\\frac{\\sqrt{3}}{2}"),
    ("\\boxed{[0, \\infty)}", "[0,\\infty)"),  # symbolic gold: math-verify
    ("\\boxed{2\\pi}", "2\\pi"),
    ("\\boxed{Monday}", "\\text{Monday}"),
]


@pytest.mark.parametrize(("output", "gold"), PASS)
def test_passes(output: str, gold: str) -> None:
    verdict = judge(output, gold)
    assert verdict.passed and verdict.valid and verdict.reward == 1.0, verdict


WRONG = [  # valid responses with a wrong final answer
    ("\\boxed{0.33}", "1/3"),
    ("\\boxed{0.3333}", "1/3"),
    ("\\boxed{2}", "-2"),
    ("\\boxed{43}", "42"),
    ("\\boxed{3 million}", "3"),
    ("\\boxed{12 3}", "123"),
    ("\\boxed{2²}", "22"),
    ("\\boxed{1,2}", "12"),
    ("\\boxed{3/4 + 1/8}", "7/8"),  # restating the question is not a notation of its value
    ("<think>\\boxed{42}</think> so \\boxed{41}", "42"),
    ("```\n\\boxed{42}\n```\n\\boxed{41}", "42"),
    ("\\boxed{3.14}", "\\pi"),
    ("\\boxed{Tuesday}", "\\text{Monday}"),
    ("\\boxed{2^{10^{10}}}", "2"),  # refused before sympy
    ("\\boxed{100000!}", "3"),
]


@pytest.mark.parametrize(("output", "gold"), WRONG)
def test_wrong_answers_score_zero(output: str, gold: str) -> None:
    verdict = judge(output, gold)
    assert verdict.valid and not verdict.passed and verdict.reward == 0.0, verdict


INVALID = [
    ("", "42"),
    ("The answer is 42.", "42"),  # not in the asked format
    ("\\boxed{}", "42"),
    ("\\boxed{42", "42"),
    ("\\boxed{41} \\boxed{42}", "42"),  # two different committed answers
    ("\\boxed{42} but maybe \\boxed{7}", "42"),
    ("\\boxed{42}\n<think>still thinking", "7"),
    ("<think>\\boxed{42}", "42"),  # an unclosed reasoning block commits nothing
    ("```\n\\boxed{42}", "42"),  # an unterminated fence commits nothing
    ("\\boxed{1}" * 40, "1"),  # too many boxes
    ("\udcff\x00\x1b[31m\ufffd", "42"),
]


@pytest.mark.parametrize(("output", "gold"), INVALID)
def test_invalid_responses(output: str, gold: str) -> None:
    verdict = judge(output, gold)
    if output.startswith("\\boxed{42}\n<think>"):
        assert verdict.valid and not verdict.passed  # the committed box (42) is outside the open think block
        return
    assert not verdict.valid and not verdict.passed and verdict.reward == 0.0 and verdict.error, verdict


def test_the_final_answer_is_the_last_box() -> None:
    committed = committed_answers("a \\boxed{1/2} b \\boxed{0.5} c")
    assert committed.answers == ["1/2", "0.5"] and committed.final == "0.5"
    assert committed_answers("\\boxed{\\boxed{3}} and \\fbox{3}").answers == ["\\boxed{3}", "3"]


FORMS = [  # (answer, gold, answer_form, value ok, form ok)
    ("\\boxed{6/8}", "3/4", "lowest_terms", True, False),
    ("\\boxed{\\frac{6}{8}}", "3/4", "lowest_terms", True, False),
    ("\\boxed{0.75}", "3/4", "lowest_terms", True, False),
    ("\\boxed{3/4}", "3/4", "lowest_terms", True, True),
    ("\\boxed{4/2}", "2", "lowest_terms", True, False),
    ("\\boxed{1 1/2}", "3/2", "lowest_terms", True, True),
    ("\\boxed{12.0}", "12", "integer", True, False),
    ("\\boxed{24/2}", "12", "integer", True, False),
    ("\\boxed{1.2e1}", "12", "integer", True, False),
    ("\\boxed{12}", "12", "integer", True, True),
    ("\\boxed{\\sqrt{72}}", "6\\sqrt{2}", "simplest_radical", True, False),
    ("\\boxed{\\frac{3}{\\sqrt{2}}}", "\\frac{3\\sqrt{2}}{2}", "simplest_radical", True, False),
    ("\\boxed{6\\sqrt{2}}", "6\\sqrt{2}", "simplest_radical", True, True),
    ("\\boxed{\\frac{3\\sqrt{2}}{2}}", "\\frac{3\\sqrt{2}}{2}", "simplest_radical", True, True),
]


@pytest.mark.parametrize(("output", "gold", "form", "value_ok", "form_ok"), FORMS)
def test_form_component(output: str, gold: str, form: str, value_ok: bool, form_ok: bool) -> None:
    verdict = judge(output, gold, answer_form=form)
    assert verdict.components["value"] == float(value_ok) and verdict.components["form"] == float(form_ok)
    assert verdict.passed is (value_ok and form_ok) and verdict.reward == float(value_ok and form_ok)


def test_units() -> None:
    assert judge("\\boxed{350}", "350", unit="cm").passed
    assert judge("\\boxed{350 \\text{ cm}}", "350", unit="cm").passed
    assert judge("\\boxed{350 centimeters}", "350", unit="cm").passed
    wrong_unit = judge("\\boxed{350 \\text{ m}}", "350", unit="cm")
    assert wrong_unit.components["value"] == 1.0 and wrong_unit.components["form"] == 0.0 and not wrong_unit.passed
    assert judge("\\boxed{18 dollars}", "18").passed  # no unit asked: a unit word is harmless
    assert judge("\\boxed{5 cm²}", "5", unit="cm^2").passed and not judge("\\boxed{5 cm}", "5", unit="cm^2").passed


def test_percent_sign_on_the_gold_number_only_for_percent_questions() -> None:
    assert verify(task("25", "What percent of the class passed?"), ["\\boxed{25\\%}"]).passed
    assert not verify(task("25", "What is 20 + 5?"), ["\\boxed{25\\%}"]).passed


def test_format_weight() -> None:
    assert verify(task("42"), ["\\boxed{43}"], format_weight=0.1).reward == pytest.approx(0.1)
    assert verify(task("42"), ["\\boxed{42}"], format_weight=0.1, correct_weight=0.9).reward == pytest.approx(1.0)
    assert verify(task("42"), ["no box"], format_weight=0.1).reward == 0.0


@pytest.mark.parametrize(
    "box, gold",
    [
        ("N", "42"),  # the placeholder a quickstart prompt once showed ("in the form \\boxed{N}")
        ("x", "42"),
        ("n", "3/4"),
        ("answer", "42"),
        ("\\text{answer}", "42"),
        ("your answer", "7"),
        ("...", "42"),
        ("?", "42"),
        ("\\ldots", "42"),
        ("N", "\\frac{\\pi}{2}"),  # symbolic gold without symbols: a letter is not an answer
        ("x", "(-\\infty, 2]"),  # an interval gold: an expression is not an interval
        ("N", "\\{1, 2\\}"),
        ("N", "x^2 + 1"),  # a symbol the gold does not use
    ],
)
def test_no_format_credit_for_a_template_placeholder(box: str, gold: str) -> None:
    """A box that holds no answer of the task's kind earns no format credit, whatever the format weight."""
    verdict = verify(task(gold), [f"The final answer is \\boxed{{{box}}}."], format_weight=0.2, correct_weight=0.8)
    assert verdict.components["format"] == 0.0 and verdict.reward == 0.0 and not verdict.passed


@pytest.mark.parametrize("box, gold", [("7", "42"), ("-3/5", "3/4"), ("(0, 1)", "(-\\infty, 2]"), ("x", "x^2 + 1")])
def test_format_credit_for_a_wrong_answer_of_the_right_kind(box: str, gold: str) -> None:
    verdict = verify(task(gold), [f"The final answer is \\boxed{{{box}}}."], format_weight=0.2, correct_weight=0.8)
    assert verdict.components["format"] == 1.0 and verdict.reward == pytest.approx(0.2) and not verdict.passed


def test_echo_of_the_question_commits_nothing() -> None:
    question = "Tim wrote \\boxed{42} on the board. What is 6 × 7?"
    echoed = verify(task("42", question), [f"{question}\nLet me think."])
    assert not echoed.valid and not echoed.passed
    assert verify(task("42", question), [f"{question}\n6 × 7 = 42, so \\boxed{{42}}"]).passed


def test_feedback_never_reveals_the_gold() -> None:
    verdict = judge("\\boxed{43}", "9817")
    assert "9817" not in (verdict.feedback or "") and "43" in (verdict.feedback or "")


@pytest.mark.parametrize(
    "gold,form",
    [
        ("42", None),
        ("3/4", "lowest_terms"),
        ("12", "integer"),
        ("6\\sqrt{2}", "simplest_radical"),
        ("-5/3", "lowest_terms"),
        ("0", None),
        ("[0,\\infty)", None),
    ],
)
def test_wrong_answer_generator_never_passes(gold: str, form: str | None) -> None:
    meta = {"answer_form": form} if form else {}
    the_task = task(gold, **meta)
    wrongs = wrong_answers(the_task, random.Random(0))
    assert len(wrongs) >= 8
    for trajectory in wrongs:
        assert not verify(the_task, trajectory).passed, trajectory
    assert verify(the_task, [f"\\boxed{{{gold}}}"]).passed


ADVERSARIAL = {
    "newlines": "\n" * 1_000_000,
    "backticks": "`" * 1_000_000,
    "fences": "```\n" * 250_000,
    "braces": "{" * 1_000_000,
    "brackets": "[" * 500_000 + "]" * 500_000,
    "boxed": "\\boxed{" * 142_857,
    "think": "<think>" * 142_857,
    "quotes": '"' * 1_000_000,
    "blockquotes": ">\n" * 500_000,
    "long box": "\\boxed{" + "1" * 1_000_000 + "}",
    "long reasoning then answer": "<think>" + "step " * 200_000 + "</think>\\boxed{42}",
}


@pytest.mark.parametrize("name", list(ADVERSARIAL))
def test_one_megabyte_actions_under_100_ms(name: str) -> None:
    output = ADVERSARIAL[name]
    best = min(_timed(output) for _ in range(3))  # best of 3: the machine is shared
    assert best < 0.1, f"{name}: {best * 1000:.0f} ms"
    assert verify(task("42"), [output]).passed is (name == "long reasoning then answer")


def _timed(output: str) -> float:
    start = time.perf_counter()
    verify(task("42"), [output])
    return time.perf_counter() - start


def test_verifier_is_safe_in_worker_threads() -> None:
    """math-verify's signal timeouts cannot work off the main thread; the verdicts must agree anyway."""
    cases = [
        ("\\boxed{[0, \\infty)}", "[0,\\infty)"),
        ("\\boxed{2\\pi}", "2\\pi"),
        ("\\boxed{3.14}", "\\pi"),
        ("\\boxed{(x+1)^{99999}}", "1"),
        ("\\boxed{\\binom{100000}{50000}}", "1"),
    ]
    expected = [judge(*case).passed for case in cases]
    with ThreadPoolExecutor(max_workers=4) as pool:
        assert [v.passed for v in pool.map(lambda case: judge(*case), cases)] == expected


def test_numeric_answers_do_not_import_sympy() -> None:
    code = (
        "import sys\n"
        "from rlvr_gym import Task\n"
        "from rlvr_gym.envs.math.verifier import verify\n"
        "t = Task(id='math/train/0', prompt='q', ground_truth='1/2')\n"
        "assert verify(t, ['\\\\boxed{\\\\dfrac12}']).passed and not verify(t, ['\\\\boxed{0.33}']).passed\n"
        "assert 'sympy' not in sys.modules and 'math_verify' not in sys.modules\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
