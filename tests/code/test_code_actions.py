"""Action parsing: run vs submit, fenced vs raw code, and no crash on any string."""

from __future__ import annotations

import random
import time

import pytest

from rlvr_gym.envs.code.actions import format_run, format_submission, parse_action
from rlvr_gym.sandboxes.python_programs.fences import fenced_blocks


def test_tags_and_fences():
    run = parse_action("let me try\n<run>\n```python\nprint(1)\n```\n</run>")
    assert (run.kind, run.code) == ("run", "print(1)\n")
    sub = parse_action("<submit>```python\nx = 1\n```\n```python\nx = 1\n```</submit>")
    assert (sub.kind, sub.code) == ("submit", "x = 1\n")  # the same block twice is one program
    raw = parse_action("<submit>\ndef f():\n    return 1\n</submit>")
    assert raw.kind == "submit" and raw.code.startswith("def f()")


@pytest.mark.parametrize(
    "text",
    [
        "<submit>```python\nx = 1\n```\n```python\ny = 2\n```</submit>",
        "<submit>x = 1</submit> or maybe <submit>y = 2</submit>",
        "```python\nx = 1\n```\n```python\ny = 2\n```",
    ],
)
def test_several_different_submissions_are_ambiguous(text):
    parsed = parse_action(text)
    assert parsed.kind == "submit" and not parsed.has_code and "different code blocks" in parsed.problem


def test_untagged_text_is_a_submission_and_submit_wins():
    assert parse_action("```python\nx = 1\n```").kind == "submit"
    assert parse_action("<run>print(1)</run> <submit>x = 1</submit>").kind == "submit"


def test_offsets_point_into_the_action():
    for text in ("<run>```python\nprint(2)\n```</run>", "prose\n```py\nx=1\n```", "\n\nx = 3"):
        parsed = parse_action(text)
        assert text[parsed.offset : parsed.offset + len(parsed.code)] == parsed.code


def test_round_trip_of_formatters():
    assert parse_action(format_submission("    return 1")).code == "    return 1\n"
    assert parse_action(format_run("print(1)")).kind == "run"


def test_unclosed_fence_and_other_languages():
    assert parse_action("<submit>```python\nx = 1").code == "x = 1"
    assert parse_action("```bash\nls\n```").code.startswith("```bash")  # no python block: the raw text
    assert not parse_action("I would write a loop.").has_code  # untagged prose is no code
    assert not parse_action("    return x + 1").has_code  # nor is untagged text that happens to parse
    assert not parse_action("x = 1\nprint(x)").has_code
    assert parse_action("```\n    return x + 1\n```").has_code  # a fenced block is an explicit answer


def test_never_raises_on_garbage():
    rng = random.Random(7)
    alphabet = "<>/runsbmit`python\n \t{}()[]:=\x00é😀"
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        parsed = parse_action(text)
        assert parsed.kind in ("run", "submit")
        assert isinstance(parsed.code, str)


ADVERSARIAL = {
    "backticks": "`" * 1_000_000,
    "newlines": "\n" * 1_000_000,
    "fence_lines": "```\n" * 250_000,
    "python_fences": "```python\n" * 100_000,
    "open_fence_no_newline": "x" + "```python" * 110_000,
    "submit_tags": "<submit>" * 125_000,
    "run_tags_and_fences": "<run>```" * 125_000,
    "closed_tags": "<submit>```python\nx\n```</submit>" * 31_250,
    "brackets": "(" * 500_000 + ")" * 500_000,
    "newlines_then_backticks": "\n" * 500_000 + "`" * 500_000,
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_parsing_is_linear_on_adversarial_megabytes(name):
    text = ADVERSARIAL[name]
    assert len(text) >= 990_000
    best = min(_timed(parse_action, text) for _ in range(3))
    assert best < 0.1, f"{name}: {best * 1000:.0f} ms"


def test_overlong_code_is_refused_not_parsed():
    parsed = parse_action(format_submission("x = 1\n" * 20_000))
    assert not parsed.has_code and "longer than" in parsed.problem
    untagged = parse_action("a = 1\n" * 200_000)  # would take seconds to parse as Python
    assert not untagged.has_code and untagged.problem


def test_fence_scanner_matches_the_documented_rules():
    text = "a ```py x\nONE``` b ```js\nTWO\n``` ```\nTHREE"
    assert [(lang, text[s:e]) for lang, s, e in fenced_blocks(text)] == [
        ("py", "ONE"),
        ("js", "TWO\n"),
        ("", "THREE"),
    ]
    assert fenced_blocks("```python") == []  # no newline after the fence: no block


def _timed(fn, *args):
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start
