"""Procedural programming tasks with reference solutions and tests (`rlvr/CodeGen-v0`).

Each template draws its parameters and inputs from the per-item generator it is given (`tasks.CodeGenTasks`
seeds it from family, split, seed and index), writes the reference solution as source text, and computes the
expected outputs by running that reference (trusted code written here, so it runs in-process). Tests are
MBPP-style asserts; the first `examples` of them are shown in the prompt. `difficulty` (1..5) widens the inputs;
templates unlock at levels 1, 2 and 3.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from .spec import CodeSpec


class CodeGenConfig(BaseModel):
    """Knobs of the generator; `difficulty` is on the shared 1..5 scale (it widens inputs and unlocks templates)."""

    seed: int = 0
    difficulty: int = Field(1, ge=1, le=5)
    num_tests: int = Field(6, ge=1, le=50)
    examples: int = Field(2, ge=0, le=10)
    templates: list[str] | None = Field(default=None, description="Restrict to these template names.")


@dataclass(frozen=True)
class Problem:
    entry_point: str
    signature: str
    description: str
    solution: str
    inputs: list[tuple[Any, ...]]


Template = Callable[[random.Random, int], Problem]


def _ints(rng: random.Random, level: int, low: int = -20, high: int = 20) -> list[int]:
    return [rng.randint(low * level, high * level) for _ in range(rng.randint(0, 4 + 4 * level))]


def _word(rng: random.Random, level: int, alphabet: str = string.ascii_letters + "  ,.!0123456789") -> str:
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6 * level + 4)))


def sum_multiples(rng: random.Random, level: int) -> Problem:
    a, b = rng.sample(range(2, 8), 2)
    return Problem(
        "sum_multiples",
        "sum_multiples(n: int) -> int",
        f"Return the sum of all integers k with 1 <= k < n that are divisible by {a} or by {b} (0 if there are none).",
        f"def sum_multiples(n):\n    return sum(k for k in range(1, n) if k % {a} == 0 or k % {b} == 0)\n",
        [(rng.randint(0, 30 * level**2),) for _ in range(64)],
    )


def caesar(rng: random.Random, level: int) -> Problem:
    k = rng.randint(1, 25)
    return Problem(
        "shift_letters",
        "shift_letters(text: str) -> str",
        f"Shift every ASCII letter of `text` forward by {k} places in the alphabet, wrapping around from z to a and "
        "keeping its case; every other character stays unchanged.",
        "def shift_letters(text):\n    out = []\n    for ch in text:\n"
        f"        if 'a' <= ch <= 'z':\n            out.append(chr((ord(ch) - 97 + {k}) % 26 + 97))\n"
        f"        elif 'A' <= ch <= 'Z':\n            out.append(chr((ord(ch) - 65 + {k}) % 26 + 65))\n"
        "        else:\n            out.append(ch)\n    return ''.join(out)\n",
        [(_word(rng, level),) for _ in range(64)],
    )


_CLASSES = {
    "digits": "ch.isdigit()",
    "uppercase letters": "ch.isupper()",
    "vowels (aeiou, either case)": "ch.lower() in 'aeiou'",
}


def count_class(rng: random.Random, level: int) -> Problem:
    name = rng.choice(sorted(_CLASSES))
    return Problem(
        "count_chars",
        "count_chars(text: str) -> int",
        f"Return how many characters of `text` are {name}.",
        f"def count_chars(text):\n    return sum(1 for ch in text if {_CLASSES[name]})\n",
        [(_word(rng, level),) for _ in range(64)],
    )


def filter_mod(rng: random.Random, level: int) -> Problem:
    m = rng.randint(2, 5)
    r = rng.randint(0, m - 1)
    square = rng.random() < 0.5
    value, what = ("x * x", "the squares of ") if square else ("x", "")
    return Problem(
        "select_mod",
        "select_mod(nums: list[int]) -> list[int]",
        f"Return {what}the numbers x of `nums` with x % {m} == {r} (Python's modulo), in their original order.",
        f"def select_mod(nums):\n    return [{value} for x in nums if x % {m} == {r}]\n",
        [(_ints(rng, level),) for _ in range(64)],
    )


def chunk_sums(rng: random.Random, level: int) -> Problem:
    k = rng.randint(2, 4)
    return Problem(
        "chunk_sums",
        "chunk_sums(nums: list[int]) -> list[int]",
        f"Split `nums` into consecutive chunks of {k} elements (the last chunk may be shorter) and return the list "
        "of the chunk sums.",
        f"def chunk_sums(nums):\n    return [sum(nums[i:i + {k}]) for i in range(0, len(nums), {k})]\n",
        [(_ints(rng, level),) for _ in range(64)],
    )


def digit_power_sum(rng: random.Random, level: int) -> Problem:
    p = rng.randint(1, 3 + level)
    return Problem(
        "digit_power_sum",
        "digit_power_sum(n: int) -> int",
        f"Return the sum of the decimal digits of abs(n), each raised to the power {p}.",
        f"def digit_power_sum(n):\n    return sum(int(d) ** {p} for d in str(abs(n)))\n",
        [(rng.randint(-(10 ** (3 * level)), 10 ** (3 * level)),) for _ in range(64)],
    )


def dedupe(rng: random.Random, level: int) -> Problem:
    fold = rng.random() < 0.5
    key, note = ("w.lower()", " Two words count as equal when they are equal ignoring case.") if fold else ("w", "")
    return Problem(
        "first_occurrences",
        "first_occurrences(words: list[str]) -> list[str]",
        f"Return the words of `words` without repetitions, keeping the first occurrence of each in order.{note}",
        f"def first_occurrences(words):\n    seen = set()\n    out = []\n    for w in words:\n        key = {key}\n"
        "        if key not in seen:\n            seen.add(key)\n            out.append(w)\n    return out\n",
        [
            ([rng.choice(["ab", "Ab", "AB", "cd", "Cd", "ef", "x", "X"]) for _ in range(rng.randint(0, 8 * level))],)
            for _ in range(64)
        ],
    )


def max_window(rng: random.Random, level: int) -> Problem:
    k = rng.randint(2, 3 + level)
    return Problem(
        "max_window_sum",
        "max_window_sum(nums: list[int]) -> int | None",
        f"Return the largest sum of {k} consecutive elements of `nums`, or None if `nums` has fewer than {k} elements.",
        f"def max_window_sum(nums):\n    if len(nums) < {k}:\n        return None\n"
        f"    return max(sum(nums[i:i + {k}]) for i in range(len(nums) - {k} + 1))\n",
        [(_ints(rng, level),) for _ in range(64)],
    )


def balanced(rng: random.Random, level: int) -> Problem:
    pairs = "()[]{}<>"[: 2 * min(4, level + 1)]
    opening, closing = pairs[0::2], pairs[1::2]
    alphabet = pairs + "ab"

    def sample() -> str:
        if rng.random() < 0.4:  # build a balanced one so both answers are well represented
            stack, out = [], []
            for _ in range(rng.randint(0, 5 * level)):
                if stack and rng.random() < 0.5:
                    out.append(closing[opening.index(stack.pop())])
                else:
                    stack.append(rng.choice(opening))
                    out.append(stack[-1])
            return "".join(out + [closing[opening.index(c)] for c in reversed(stack)])
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6 * level)))

    return Problem(
        "is_balanced",
        "is_balanced(text: str) -> bool",
        f"Return True if the brackets {' '.join(a + b for a, b in zip(opening, closing, strict=True))} in `text` are balanced and "
        "properly nested (other characters are ignored), else False.",
        f"def is_balanced(text):\n    pairs = {dict(zip(closing, opening, strict=True))!r}\n    stack = []\n    for ch in text:\n"
        f"        if ch in {opening!r}:\n            stack.append(ch)\n        elif ch in pairs:\n"
        "            if not stack or stack.pop() != pairs[ch]:\n                return False\n    return not stack\n",
        [(sample(),) for _ in range(64)],
    )


TEMPLATES: dict[str, tuple[int, Template]] = {
    "sum_multiples": (1, sum_multiples),
    "caesar": (1, caesar),
    "count_class": (1, count_class),
    "filter_mod": (1, filter_mod),
    "chunk_sums": (2, chunk_sums),
    "digit_power_sum": (2, digit_power_sum),
    "dedupe": (2, dedupe),
    "max_window": (3, max_window),
    "balanced": (3, balanced),
}


def _call(entry: str, args: tuple[Any, ...]) -> str:
    return f"{entry}({', '.join(repr(a) for a in args)})"


def _tests(problem: Problem, count: int) -> list[str]:
    namespace: dict[str, Any] = {}
    exec(compile(problem.solution, "<reference>", "exec"), namespace)  # our own reference code, not the agent's
    function = namespace[problem.entry_point]
    tests: list[str] = []
    seen: set[str] = set()
    for args in problem.inputs:
        call = _call(problem.entry_point, args)
        if call in seen:
            continue
        seen.add(call)
        expected = function(*args)
        tests.append(
            f"assert {call} is {expected!r}"
            if expected is None or isinstance(expected, bool)
            else f"assert {call} == {expected!r}"
        )
        if len(tests) == count:
            break
    return tests


def _prompt(problem: Problem, examples: list[str]) -> str:
    lines = [f"Write a Python function `{problem.signature}`.", "", problem.description]
    if examples:
        lines += ["", "Examples (the hidden tests are of the same form):", "```python", *examples, "```"]
    return "\n".join(lines)


def draw_problem(config: CodeGenConfig, rng: random.Random) -> tuple[str, Problem]:
    """A template name and its problem, drawn from `rng` among the templates `config` allows."""
    names = [n for n, (level, _) in TEMPLATES.items() if level <= config.difficulty]
    if config.templates:
        unknown = set(config.templates) - set(TEMPLATES)
        if unknown:
            raise ValueError(f"unknown code templates: {sorted(unknown)}")
        names = [n for n in TEMPLATES if n in config.templates]
    name = rng.choice(names)
    return name, TEMPLATES[name][1](rng, config.difficulty)


def problem_spec(problem: Problem, config: CodeGenConfig) -> tuple[CodeSpec, str]:
    """The hidden spec (tests from the reference) and the prompt (with the first `config.examples` tests)."""
    tests = _tests(problem, config.num_tests)
    spec = CodeSpec(
        entry_point=problem.entry_point, test_style="asserts", asserts=tests, reference_solution=problem.solution
    )
    return spec, _prompt(problem, tests[: config.examples])
