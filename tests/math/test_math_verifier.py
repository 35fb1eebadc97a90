"""Hand-written verifier cases: equivalent forms accepted, near misses and garbage rejected, adversarial outputs."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from rlvr_gym.envs.math.extract import extract_answer
from rlvr_gym.envs.math.verifier import MathVerifier, verify_answer

ACCEPT = [
    ("\\boxed{\\dfrac12}", "0.5"),
    ("\\boxed{0.5}", "1/2"),
    ("\\boxed{1/2}", "\\frac{1}{2}"),
    ("\\boxed{\\frac{1}{2}}", "0.5"),
    ("So the answer is 0.5", "1/2"),
    ("<answer>1/2</answer>", "0.5"),
    ("<answer>The answer is 12</answer>", "12"),
    ("\\boxed{\\tfrac{2}{4}}", "1/2"),
    ("\\boxed{-\\frac{3}{4}}", "-3/4"),
    ("\\boxed{\\frac{-3}{4}}", "-3/4"),
    ("\\boxed{1,000}", "1000"),
    ("\\boxed{\\$18}", "18"),
    ("\\boxed{18 \\text{ dollars}}", "18"),
    ("She has 42 left.\n#### 42", "42"),
    ("Final answer: 17", "17"),
    ("\\boxed{x = 4}", "4"),
    ("\\boxed{3.0}", "3"),
    ("\\boxed{-0}", "0"),
    ("\\boxed{0.333333}", "1/3"),
    ("\\boxed{\\frac{\\sqrt{3}}{2}}", "\\frac{\\sqrt3}{2}"),
    ("\\boxed{\\sqrt{2}/2}", "\\frac{1}{\\sqrt{2}}"),
    ("\\boxed{[0, \\infty)}", "[0,\\infty)"),
    ("\\boxed{(1, 2]}", "(1,2]"),
    ("\\boxed{2\\pi}", "2\\pi"),
    ("\\boxed{\\pi/2}", "\\frac{\\pi}{2}"),
    ("\\boxed{1+2x}", "2x+1"),
    ("\\boxed{\\{1, 2, 3\\}}", "\\{3, 2, 1\\}"),
    ("\\boxed{10^{3}}", "1000"),
    ("We get\n$\\frac{7}{2}$", "3.5"),
    ("Adding them up.\n\n**42**", "42"),
    ("\\boxed{42}\nThus the total is \\boxed{42}.", "42"),
    ("\\boxed{0.5}, or equivalently \\boxed{\\frac12}", "1/2"),
    ("\\boxed 7", "7"),
    ("\\fbox{9}", "9"),
    ("\\boxed{\\left(\\frac{1}{2}\\right)}", "1/2"),
    ("\\boxed{４２}", "42"),
    ("The answer is $-2$.", "-2"),
    ("The answer is 42 because 6 × 7 = 42.", "42"),
    ("The answer is 3.5. That is all.", "7/2"),
    ("\\boxed{25\\%}", "25"),
    ("\\boxed{25\\%}", "0.25"),
    ("\\boxed{Monday}", "\\text{Monday}"),
]

REJECT = [
    ("\\boxed{0.33}", "1/3"),  # near miss: too few decimals
    ("\\boxed{0.3333}", "1/3"),
    ("\\boxed{0.51}", "1/2"),
    ("\\boxed{0.5000001}", "1/2"),
    ("\\boxed{2}", "-2"),  # sign error
    ("\\boxed{1/3}", "1/2"),
    ("\\boxed{43}", "42"),
    ("\\boxed{25\\%}", "2.5"),
    ("\\boxed{Tuesday}", "\\text{Monday}"),
    ("The answer is 42", "4.2"),
    ("\\boxed{3.14}", "\\pi"),
    ("\\boxed{1,2}", "12"),  # a pair, not twelve
    ("\\boxed{\\frac{1}{0}}", "0"),
    ("\\boxed{x}", "42"),
    ("\\boxed{\\sqrt{3}}", "\\frac{\\sqrt3}{2}"),
    ("\\boxed{(1, 2)}", "(1,2]"),  # wrong interval end
    ("", "42"),
    ("   \n\t  ", "42"),
    ("asdkjh qwe zzz", "42"),
    ("\\boxed{}", "42"),
    ("<answer></answer>", "0"),
    ("\\boxed{42", "42"),  # unclosed
    ("\\boxed{41} \\boxed{42} \\boxed{43}", "42"),  # hedging with several boxes
    ("\\boxed{42} but maybe \\boxed{7}", "42"),
    ("The numbers 42 and 7 both appear in this sentence.", "42"),
    ("\udcff\udcfe\x00\x1b[31m\ufffd", "42"),
    ("\\boxed{4\udcff2}", "42"),
    ("\\boxed{2^{10^{10}}}", "2"),  # would hang sympy without the size guard
    ("\\boxed{100000!}", "3"),
    ("\\boxed{((9^{999})^{999})^{999}}", "9"),
]


@pytest.mark.parametrize(("output", "gold"), ACCEPT)
def test_accepts_equivalent_forms(output: str, gold: str) -> None:
    verdict = verify_answer(output, gold)
    assert verdict.passed, verdict.feedback
    assert verdict.reward == 1.0
    assert verdict.components == {"format": 1.0, "correct": 1.0}


@pytest.mark.parametrize(("output", "gold"), REJECT)
def test_rejects_near_misses_and_garbage(output: str, gold: str) -> None:
    verdict = verify_answer(output, gold)
    assert not verdict.passed
    assert verdict.reward == 0.0
    assert verdict.components["correct"] == 0.0


def test_case_count() -> None:
    assert len(ACCEPT) + len(REJECT) >= 40


def test_format_component_only_when_an_answer_was_extracted() -> None:
    assert verify_answer("\\boxed{43}", "42").components == {"format": 1.0, "correct": 0.0}
    assert verify_answer("no idea", "42").components == {"format": 0.0, "correct": 0.0}
    hedge = verify_answer("\\boxed{1} \\boxed{2}", "1")
    assert hedge.components["format"] == 0.0 and "different" in (hedge.feedback or "")


def test_format_weight_is_configurable() -> None:
    verifier = MathVerifier(format_weight=0.1)
    assert verifier.verdict("\\boxed{43}", "42").reward == pytest.approx(0.1)
    assert verifier.verdict("\\boxed{42}", "42").reward == pytest.approx(1.1)
    assert not verifier.verdict("\\boxed{43}", "42").passed


def test_multiple_answer_policy_is_configurable() -> None:
    assert MathVerifier(multiple_answers="last").verdict("\\boxed{1} then \\boxed{2}", "2").passed
    assert MathVerifier(multiple_answers="first").verdict("\\boxed{1} then \\boxed{2}", "1").passed
    assert not MathVerifier().verdict("\\boxed{1} then \\boxed{2}", "2").passed


def test_feedback_never_reveals_the_gold() -> None:
    verdict = verify_answer("\\boxed{43}", "9817")
    assert "9817" not in (verdict.feedback or "")
    assert "43" in (verdict.feedback or "")


def test_question_echo_does_not_score() -> None:
    question = "Tim wrote \\boxed{42} on the board. Is it the value of 6 × 7?"
    assert verify_answer(question, "42").passed  # without the question the echo would pass...
    echoed = verify_answer(f"{question}\nLet me think.", "42", question=question)
    assert not echoed.passed and echoed.components["format"] == 0.0  # ...so the env strips it
    assert verify_answer(f"{question}\nYes: \\boxed{{42}}", "42", question=question).passed


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("x" * 1_000_000, False),
        ("9" * 1_000_000, False),
        ("\\boxed{" * 200_000, False),
        ("\\boxed{" + "1" * 1_000_000 + "}", False),
        ("<answer>" + "7" * 1_000_000, False),
        ("word " * 200_000 + "\n\\boxed{42}", True),
        ("\\boxed{42}" + " padding" * 125_000, True),
    ],
)
def test_one_megabyte_outputs_are_fast(output: str, expected: bool) -> None:
    start = time.perf_counter()
    verdict = verify_answer(output, "42")
    assert time.perf_counter() - start < 1.0
    assert verdict.passed is expected


def test_non_utf8_ish_text() -> None:
    assert verify_answer("\udcff\x00 garbage \ud800 \\boxed{42}", "42").passed
    assert not verify_answer("\x00" * 1000, "42").passed
    assert verify_answer(b"\xff\xfe The answer is 42".decode("utf-8", "replace"), "42").passed
    assert verify_answer(b"\xff\xfe\\boxed{42}", "42").passed  # bytes are decoded, never raise


def test_extraction_methods() -> None:
    assert extract_answer("\\boxed{\\frac{a}{b}}").answer == "\\frac{a}{b}"
    assert extract_answer("\\boxed{3}\n<answer>4</answer>").method == "boxed"
    assert extract_answer("<answer> 4 </answer>").answer == "4"
    assert extract_answer("blah\nThe final answer is: 12.").answer == "12"
    assert extract_answer("## Solution\nWe compute things").answer is None  # a markdown heading is no answer
    assert extract_answer("Please answer in the box").answer is None


def _symbolic_cases() -> list[tuple[str, str]]:
    return [case for case in ACCEPT + REJECT if "\\sqrt" in case[0] or "\\pi" in case[0] or "^" in case[0]]


def test_verifier_is_safe_in_worker_threads() -> None:
    """math-verify's signal timeouts raise off the main thread; ours must not, and must agree with the main thread."""
    cases = _symbolic_cases() + [("\\boxed{(x+1)^{99999}}", "1"), ("\\boxed{\\binom{100000}{50000}}", "1")]
    assert len(cases) >= 6
    expected = [verify_answer(output, gold).passed for output, gold in cases]
    verifier = MathVerifier()  # fresh instance, shared caches keyed by thread mode
    with ThreadPoolExecutor(max_workers=4) as pool:
        start = time.perf_counter()
        results = list(pool.map(lambda case: verifier.verdict(*case), cases))
        elapsed = time.perf_counter() - start
    assert [verdict.passed for verdict in results] == expected
    assert all(verdict.error is None for verdict in results)
    assert elapsed < 30


def test_worker_thread_uses_no_signal_timeout() -> None:
    verifier = MathVerifier()
    seen: list[int | None] = []
    thread = threading.Thread(target=lambda: seen.append(verifier._timeout()))
    thread.start()
    thread.join()
    assert seen == [None]
    assert verifier._timeout() == 5


def test_numeric_answers_do_not_import_sympy() -> None:
    """The fast path (and importing the family) stays off sympy: it is what keeps 20k-episode runs cheap."""
    code = (
        "import sys\n"
        "import rlvr_gym.envs.math\n"
        "from rlvr_gym.envs.math.verifier import verify_answer\n"
        "assert verify_answer('\\\\boxed{\\\\dfrac12}', '0.5').passed\n"
        "assert not verify_answer('\\\\boxed{0.33}', '1/3').passed\n"
        "assert 'sympy' not in sys.modules and 'math_verify' not in sys.modules, 'sympy imported'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
