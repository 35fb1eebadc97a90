"""Generated math tasks: seven problem kinds at difficulty 1..5, drawn per index, deduplicated, split-disjoint.

`MathTasks` is the family's `TaskSource`. Item i is drawn from `self.rng(i, attempt)` (hashlib-seeded) and kept
only if its content hash falls in this split (`split_of`, as in `TaskSource.draw`), so train and eval never share
a question, and only if no earlier index of the split used the same question, so a split never repeats one
(names in word problems do not count: "Ana has 3 shirts" and "Ben has 3 shirts" are the same question). Dedup
makes item i depend on items 0..i-1: they are built once per process and shared by every source with the same
config, so a task is still a pure function of (config, split, seed, index) in any process. Dedup covers the first
`DEDUP_WINDOW` indices (building them costs about 2 s once); later indices are independent split-filtered draws.
A configuration whose question space is small (`SMALL_SPACES`: difficulty-1 arithmetic has 100 questions) declares
`allows_duplicates` up front; once its split is used up it cycles through its unique questions.
"""

from __future__ import annotations

import math
import random
import re
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rlvr_gym import Message, Task
from rlvr_gym.family import TaskSource, split_of

from .verifier import format_number

KindName = Literal["addition", "arithmetic", "fractions", "linear", "modular", "combinatorics", "radicals", "units"]
INSTRUCTION = "Put your final answer in \\boxed{}."
LOWEST = " Give the answer as a fraction in lowest terms, or as an integer."
# Distinct questions of the kinds whose space is small (measured over 20,000 draws; the test re-measures them).
# Any other (kind, difficulty) has well over 1,000 questions.
SMALL_SPACES = {
    ("addition", 1): 100,
    ("addition", 2): 2500,
    ("arithmetic", 1): 100,
    ("fractions", 1): 204,
    ("linear", 1): 420,
    ("modular", 1): 819,
    ("modular", 4): 1001,
    ("combinatorics", 1): 64,
    ("combinatorics", 2): 37,
    ("combinatorics", 3): 40,
    ("combinatorics", 4): 29,
    ("combinatorics", 5): 157,
    ("radicals", 1): 29,
    ("radicals", 2): 80,
    ("radicals", 3): 110,
    ("radicals", 4): 252,
    ("units", 1): 59,
    ("units", 2): 391,
    ("units", 4): 154,
    ("radicals", 5): 96,
}
LARGE_SPACE = 10_000
DUPLICATES_BELOW = 5_000  # a mix with fewer questions than this declares that its splits may repeat questions
DEDUP_WINDOW = 100_000  # indices below this never repeat a question within a split
EXHAUSTED_AFTER = 1000  # draws in a row without a new question: the question space is used up


@dataclass(frozen=True)
class Problem:
    """A question, its exact answer `answer * sqrt(radicand)`, and the written form the question asks for."""

    question: str
    answer: Fraction
    form: str | None = None
    radicand: int = 1
    unit: str | None = None

    @property
    def gold(self) -> str:
        if self.radicand == 1:
            return format_number(self.answer)
        sign = "-" if self.answer < 0 else ""
        num = abs(self.answer.numerator)
        head = f"{sign}{num if num != 1 else ''}\\sqrt{{{self.radicand}}}"
        return head if self.answer.denominator == 1 else f"\\frac{{{head}}}{{{self.answer.denominator}}}"


Kind = Callable[[random.Random, int], Problem]


def _nonzero(rng: random.Random, low: int, high: int) -> int:
    value = 0
    while value == 0:
        value = rng.randint(low, high)
    return value


def _signed(value: int) -> str:
    """`+ 3` / `- 3` for the tail of an expression."""
    return f"+ {value}" if value >= 0 else f"- {-value}"


def _paren(value: int) -> str:
    return f"({value})" if value < 0 else str(value)


def _linear(coef: int, const: int, var: str = "x") -> str:
    """`3x - 5`, `-x + 2`, `x`: one side of a linear equation."""
    if coef == 0:
        return str(const)
    head = {1: var, -1: f"-{var}"}.get(coef, f"{coef}{var}")
    return head if const == 0 else f"{head} {_signed(const)}"


def _frac(value: Fraction, group: bool = False) -> str:
    """A fraction operand; parenthesised when negative or (with `group`) next to × or ÷ (`a/b ÷ c/d` is ambiguous)."""
    text = format_number(value)
    return f"({text})" if value < 0 or (group and value.denominator != 1) else text


# ---- problem kinds ---------------------------------------------------------------------------------------------
ADDEND_LIMITS = {1: 9, 2: 49, 3: 99, 4: 999, 5: 9999}


def addition(rng: random.Random, difficulty: int) -> Problem:
    """`a + b` with both addends in 0..ADDEND_LIMITS[difficulty]: one skill on a graded scale, with enough distinct
    questions from difficulty 2 on (2,500) for a held-out split of a few hundred."""
    limit = ADDEND_LIMITS[difficulty]
    a, b = rng.randint(0, limit), rng.randint(0, limit)
    return Problem(f"What is {a} + {b}?", Fraction(a + b))


def arithmetic(rng: random.Random, difficulty: int) -> Problem:
    if difficulty == 1:
        a, b = rng.randint(0, 9), rng.randint(0, 9)
        return Problem(f"What is {a} + {b}?", Fraction(a + b))
    if difficulty == 2:
        a, b = rng.randint(10, 99), rng.randint(10, 99)
        if rng.random() < 0.5:
            return Problem(f"What is {a} + {b}?", Fraction(a + b))
        return Problem(f"What is {a} - {b}?", Fraction(a - b))
    if difficulty == 3:
        a, b, c = rng.randint(2, 12), rng.randint(2, 12), rng.randint(1, 99)
        if rng.random() < 0.5:
            return Problem(f"What is {a} × {b} + {c}?", Fraction(a * b + c))
        return Problem(f"What is {c} - {a} × {b}?", Fraction(c - a * b))
    if difficulty == 4:
        a, b, c, d = rng.randint(-30, 50), rng.randint(-30, 50), rng.randint(2, 15), rng.randint(-99, 99)
        return Problem(f"What is ({a} - {_paren(b)}) × {c} {_signed(d)}?", Fraction((a - b) * c + d))
    divisor, quotient = rng.randint(2, 19), rng.randint(-40, 40)
    a, b = rng.randint(11, 99), rng.randint(-25, 25)
    c = a * b - quotient * divisor
    return Problem(f"What is ({a} × {_paren(b)} - {_paren(c)}) ÷ {divisor}?", Fraction(quotient))


def _fraction(rng: random.Random, max_den: int, signed: bool = False) -> Fraction:
    den = rng.randint(2, max_den)
    value = Fraction(rng.randint(1, den * 2 - 1), den)
    return -value if signed and rng.random() < 0.4 else value


def fractions(rng: random.Random, difficulty: int) -> Problem:
    if difficulty == 1:
        den = rng.randint(2, 9)
        a, b = rng.randint(1, den - 1), rng.randint(1, den - 1)
        question, value = f"What is {a}/{den} + {b}/{den}?", Fraction(a, den) + Fraction(b, den)
    elif difficulty == 2:
        x, y = _fraction(rng, 10), _fraction(rng, 10)
        plus = rng.random() < 0.5
        question, value = f"What is {_frac(x)} {'+' if plus else '-'} {_frac(y)}?", x + y if plus else x - y
    elif difficulty == 3:
        x, y = _fraction(rng, 12), _fraction(rng, 12)
        times = rng.random() < 0.5
        question = f"What is {_frac(x, True)} {'×' if times else '÷'} {_frac(y, True)}?"
        value = x * y if times else x / y
    elif difficulty == 4:
        x, y, z = _fraction(rng, 12), _fraction(rng, 12), _fraction(rng, 12)
        question, value = f"What is {_frac(x)} + {_frac(y, True)} × {_frac(z, True)}?", x + y * z
    else:
        x, y, z = _fraction(rng, 15, True), _fraction(rng, 15, True), _fraction(rng, 15, True)
        question, value = f"What is ({_frac(x)} - {_frac(y)}) ÷ {_frac(z, True)}?", (x - y) / z
    return Problem(question + LOWEST, value, "lowest_terms")


def linear(rng: random.Random, difficulty: int) -> Problem:
    ask = " Solve for x."
    if difficulty == 1:
        x, a = rng.randint(0, 20), rng.randint(1, 20)
        return Problem(f"x + {a} = {x + a}.{ask}", Fraction(x))
    if difficulty == 2:
        x, a, b = rng.randint(-10, 10), rng.randint(2, 9), _nonzero(rng, -20, 20)
        return Problem(f"{_linear(a, b)} = {a * x + b}.{ask}", Fraction(x))
    if difficulty == 3:
        x, a = rng.randint(-12, 12), _nonzero(rng, -9, 9)
        c = _nonzero(rng, -9, 9)
        while c == a:
            c = _nonzero(rng, -9, 9)
        b = rng.randint(-30, 30)
        return Problem(f"{_linear(a, b)} = {_linear(c, a * x + b - c * x)}.{ask}", Fraction(x))
    if difficulty == 4:
        a, b, c = rng.randint(2, 12), _nonzero(rng, -30, 30), rng.randint(-30, 30)
        return Problem(f"{_linear(a, b)} = {c}.{ask}{LOWEST}", Fraction(c - b, a), "lowest_terms")
    a, b, c = rng.randint(2, 9), rng.randint(1, 9), rng.randint(-20, 20)
    d = rng.randint(2, 9)
    while d == a:
        d = rng.randint(2, 9)
    e, f = rng.randint(1, 9), rng.randint(-20, 20)
    # a(x + b) + c = d(x - e) + f  =>  (a - d) x = -d e + f - a b - c
    question = f"{a}(x + {b}) {_signed(c)} = {d}(x - {e}) {_signed(f)}.{ask}{LOWEST}"
    return Problem(question, Fraction(-d * e + f - a * b - c, a - d), "lowest_terms")


_PRIMES = [p for p in range(3, 100) if all(p % q for q in range(2, int(p**0.5) + 1))]


def modular(rng: random.Random, difficulty: int) -> Problem:
    if difficulty == 1:
        a, m = rng.randint(10, 100), rng.randint(2, 10)
        return Problem(f"What is the remainder when {a} is divided by {m}?", Fraction(a % m), "integer")
    if difficulty == 2:
        a, b, m = rng.randint(10, 99), rng.randint(10, 99), rng.randint(3, 20)
        return Problem(f"What is ({a} × {b}) mod {m}?", Fraction(a * b % m), "integer")
    if difficulty == 3:
        a, k, m = rng.randint(2, 30), rng.randint(5, 60), rng.randint(5, 50)
        return Problem(f"What is {a}^{k} mod {m}?", Fraction(pow(a, k, m)), "integer")
    if difficulty == 4:
        m = rng.choice(_PRIMES[3:])
        a = rng.randint(2, m - 1)
        question = f"Find the integer x with 0 ≤ x < {m} such that {a}x ≡ 1 (mod {m})."
        return Problem(question, Fraction(pow(a, -1, m)), "integer")
    m1, m2 = rng.sample(_PRIMES[:12], 2)
    r1, r2 = rng.randint(0, m1 - 1), rng.randint(0, m2 - 1)
    x = next(v for v in range(m1 * m2) if v % m1 == r1 and v % m2 == r2)
    question = f"Find the smallest non-negative integer x with x ≡ {r1} (mod {m1}) and x ≡ {r2} (mod {m2})."
    return Problem(question, Fraction(x), "integer")


NAMES = ["Ana", "Ben", "Chloe", "Dev", "Emma", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kofi", "Lena"]
_WORDS = (
    "LEVEL BANANA PEPPER COOKIE LETTER BALLOON MISSISSIPPI COFFEE ELEVEN TOMATO APPLE PUZZLE TATTOO COMMITTEE "
    "ADDRESS SUCCESS BOOKKEEPER PARALLEL REFERENCE GAZEBO RABBIT CANNON PAPAYA MAMMAL KAYAK ASSESS NONSENSE GIGGLE "
    "DOODLE"
).split()
_NAME = re.compile(r"\b(?:" + "|".join(NAMES) + r")\b")


def _multinomial(word: str) -> int:
    count = math.factorial(len(word))
    for repeats in Counter(word).values():
        count //= math.factorial(repeats)
    return count


def combinatorics(rng: random.Random, difficulty: int) -> Problem:
    name = rng.choice(NAMES)
    if difficulty == 1:
        shirts, pants = rng.randint(2, 9), rng.randint(2, 9)
        question = (
            f"{name} has {shirts} shirts and {pants} pairs of pants. "
            "How many different outfits of one shirt and one pair of pants can they make?"
        )
        return Problem(question, Fraction(shirts * pants), "integer")
    if difficulty == 2:
        books = rng.randint(3, 12)
        shelf = rng.randint(2, min(books, 5))
        question = f"In how many different orders can {name} put {shelf} of {books} different books on a shelf?"
        return Problem(question, Fraction(math.perm(books, shelf)), "integer")
    if difficulty == 3:
        n, k = rng.randint(6, 15), rng.randint(2, 4)
        if rng.random() < 0.5:
            question = f"A club has {n} members. In how many ways can a committee of {k} members be chosen?"
            return Problem(question, Fraction(math.comb(n, k)), "integer")
        question = (
            f"{n} runners take part in a race. In how many ways can the gold, silver and bronze medals be awarded?"
        )
        return Problem(question, Fraction(math.perm(n, 3)), "integer")
    if difficulty == 4:
        word = rng.choice(_WORDS)
        question = f"How many distinct arrangements of the letters of the word {word} are there?"
        return Problem(question, Fraction(_multinomial(word)), "integer")
    if rng.random() < 0.5:
        men, women, k = rng.randint(4, 9), rng.randint(3, 8), rng.randint(3, 5)
        question = (
            f"A team of {k} people is chosen from {men} men and {women} women. "
            "How many possible teams include at least one woman?"
        )
        return Problem(question, Fraction(math.comb(men + women, k) - math.comb(men, k)), "integer")
    red, blue = rng.randint(2, 8), rng.randint(2, 8)
    question = (
        f"A bag holds {red} red and {blue} blue marbles. {name} draws two marbles without replacement. "
        "What is the probability that both are red? Give the answer as a fraction in lowest terms."
    )
    return Problem(question, Fraction(math.comb(red, 2), math.comb(red + blue, 2)), "lowest_terms")


def _square_free(rng: random.Random, high: int) -> int:
    while True:
        n = rng.randint(2, high)
        if all(n % (k * k) for k in range(2, int(n**0.5) + 1)):
            return n


def radicals(rng: random.Random, difficulty: int) -> Problem:
    form = "simplest_radical"
    ask = " Give the answer in simplest radical form."
    if difficulty == 1:
        k = rng.randint(2, 30)
        return Problem(f"What is \\sqrt{{{k * k}}}?", Fraction(k), "integer")
    if difficulty == 2:
        k, m = rng.randint(2, 9), _square_free(rng, 15)
        return Problem(f"Simplify \\sqrt{{{k * k * m}}}.{ask}", Fraction(k), form, m)
    if difficulty == 3:
        k, m = rng.randint(2, 12), _square_free(rng, 15)
        return Problem(f"Simplify \\sqrt{{{k * k * m}}}.{ask}", Fraction(k), form, m)
    if difficulty == 4:
        m, a, b = _square_free(rng, 11), rng.randint(1, 6), rng.randint(2, 7)
        question = f"Simplify \\sqrt{{{a * a * m}}} + \\sqrt{{{b * b * m}}}.{ask}"
        return Problem(question, Fraction(a + b), form, m)
    a, m = rng.randint(1, 12), _square_free(rng, 13)
    value = Fraction(a, m)  # a / sqrt(m) = (a / m) sqrt(m)
    return Problem(f"Simplify \\frac{{{a}}}{{\\sqrt{{{m}}}}}.{ask}", value, form, m)


def _tenths(rng: random.Random, low: int, high: int) -> Fraction:
    return Fraction(rng.randint(low * 10, high * 10), 10)


def units(rng: random.Random, difficulty: int) -> Problem:
    """Measurement conversions; the question names the unit of the answer (`unit` in the metadata)."""
    if difficulty == 1:
        k = rng.randint(2, 60)
        return Problem(f"How many centimeters are in {k} meters?", Fraction(100 * k), unit="cm")
    if difficulty == 2:
        x = _tenths(rng, 1, 40)
        return Problem(f"Convert {format_decimal(x)} kilograms to grams.", 1000 * x, unit="g")
    if difficulty == 3:
        a, b = rng.randint(2, 30), rng.randint(5, 95)
        name = rng.choice(NAMES)
        question = f"A rope is {a} m long. {name} cuts off {b} cm. How long is the rest of the rope, in centimeters?"
        return Problem(question, Fraction(100 * a - b), unit="cm")
    if difficulty == 4:
        speed, minutes = rng.randint(3, 24) * 5, rng.choice([6, 12, 15, 20, 30, 45, 90])
        question = f"A car drives at {speed} km/h for {minutes} minutes. How far does it go, in kilometers?"
        return Problem(question, Fraction(speed * minutes, 60), unit="km")
    width, length = _tenths(rng, 1, 12), _tenths(rng, 1, 12)
    question = (
        f"A rectangle is {format_decimal(width)} m wide and {format_decimal(length)} m long. "
        "What is its area in square centimeters?"
    )
    return Problem(question, width * length * 10_000, unit="cm^2")


def format_decimal(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{float(value):g}"


KINDS: dict[str, Kind] = {
    "addition": addition,
    "arithmetic": arithmetic,
    "fractions": fractions,
    "linear": linear,
    "modular": modular,
    "combinatorics": combinatorics,
    "radicals": radicals,
    "units": units,
}

# `rlvr/Math-v0`'s mix: every kind but `addition` (added later; keeping it out keeps existing ids' tasks unchanged).
DEFAULT_MIX = ("arithmetic", "fractions", "linear", "modular", "combinatorics", "radicals", "units")


# ---- prompts -----------------------------------------------------------------------------------------------------
EXAMPLES = [
    ("What is 2 + 3?", "2 + 3 = 5. The final answer is \\boxed{5}.", "5"),
    ("What is 4 + 4?", "4 + 4 = 8. The final answer is \\boxed{8}.", "8"),
]


def prompt_for(question: str, style: str = "plain", gold: str | None = None) -> str | list[Message]:
    """`plain`: the question and the box instruction. `one_shot`: a worked example exchange first (chat turns),
    whose answer differs from this task's, so echoing the example never scores."""
    text = f"{question}\n\n{INSTRUCTION}"
    if style == "plain":
        return text
    example, reply, answer = EXAMPLES[0] if gold != EXAMPLES[0][2] else EXAMPLES[1]
    return [
        Message(role="user", content=f"{example}\n\n{INSTRUCTION}"),
        Message(role="assistant", content=reply),
        Message(role="user", content=text),
    ]


def reference_action(gold: str) -> str:
    return f"The final answer is \\boxed{{{gold}}}."


# ---- the source --------------------------------------------------------------------------------------------------
class MathConfig(BaseModel):
    """Which problem kinds to mix (a list, or weights), how hard, how many tasks, and the prompt style."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    families: dict[KindName, float] = Field(default_factory=lambda: dict.fromkeys(DEFAULT_MIX, 1.0))
    difficulty: int = Field(2, ge=1, le=5)
    size: int | None = Field(None, ge=1, description="Number of tasks; None = unbounded.")
    prompt_style: Literal["plain", "one_shot"] = "plain"

    @field_validator("families", mode="before")
    @classmethod
    def _weights(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [value]
        if isinstance(value, list | tuple):
            value = dict.fromkeys(value, 1.0)
        return value

    @field_validator("families")
    @classmethod
    def _positive(cls, value: dict[str, float]) -> dict[str, float]:
        if not value or any(w < 0 for w in value.values()) or sum(value.values()) <= 0:
            raise ValueError("families needs at least one problem kind with a positive weight")
        return value


def fingerprint(problem: Problem) -> str:
    """The question without the names of people in it: what makes two questions the same question."""
    return _NAME.sub("NAME", problem.question)


class _Prefix:
    """Items 0..n-1 of one (config, split, seed), built in order and shared by sources with that key."""

    def __init__(self) -> None:
        self.items: list[tuple[str, Problem]] = []
        self.seen: set[str] = set()
        self.exhausted = False
        self.lock = threading.Lock()


_PREFIXES: dict[tuple[Any, ...], _Prefix] = {}
_PREFIXES_LOCK = threading.Lock()


class MathTasks(TaskSource):
    """Generated problems; see the module docstring for splits and deduplication."""

    family = "math"

    def __init__(self, *, split: str = "train", seed: int = 0, **config: Any) -> None:
        super().__init__(split=split, seed=seed)
        self.config = MathConfig.model_validate(config)
        names = sorted(name for name, weight in self.config.families.items() if weight > 0)
        self._kinds = names
        self._weights = [self.config.families[name] for name in names]
        key = (self.config.model_dump_json(), split, seed)
        with _PREFIXES_LOCK:
            self._prefix = _PREFIXES.setdefault(key, _Prefix())
        space = sum(SMALL_SPACES.get((name, self.config.difficulty), LARGE_SPACE) for name in names)
        self.allows_duplicates = space < DUPLICATES_BELOW or self._prefix.exhausted

    def __len__(self) -> int:
        if self.config.size is None:
            raise TypeError("an unbounded generator has no length")
        return self.config.size

    def _draw(self, index: int, attempt: int) -> tuple[str, Problem]:
        return self._kind_problem(self.rng(index, attempt))

    def _kind_problem(self, rng: random.Random) -> tuple[str, Problem]:
        kind = self._kinds[0] if len(self._kinds) == 1 else rng.choices(self._kinds, weights=self._weights)[0]
        return kind, KINDS[kind](rng, self.config.difficulty)

    def _extend(self, index: int) -> None:
        prefix = self._prefix
        while len(prefix.items) <= index and not prefix.exhausted:
            position = len(prefix.items)
            for attempt in range(2 * EXHAUSTED_AFTER):
                kind, problem = self._draw(position, attempt)
                key = fingerprint(problem)
                if key in prefix.seen or split_of(key, self.eval_fraction) != self.split:
                    if attempt >= EXHAUSTED_AFTER and prefix.items:
                        prefix.exhausted = True
                        break
                    continue
                prefix.seen.add(key)
                prefix.items.append((kind, problem))
                break
            else:
                raise RuntimeError(f"math: no {self.split} question for index {position}")
        self.allows_duplicates = self.allows_duplicates or prefix.exhausted

    def problem(self, index: int) -> tuple[str, Problem]:
        """Item `index`: deduplicated below `DEDUP_WINDOW` (or when the space is used up), else a fresh draw."""
        if index < 0 or (self.config.size is not None and index >= self.config.size):
            raise IndexError(f"task index {index} out of range")
        if index >= DEDUP_WINDOW and not self._prefix.exhausted:
            return self.draw(index, lambda rng: self._kind_problem(rng), lambda item: fingerprint(item[1]))
        with self._prefix.lock:
            self._extend(index)
            items = self._prefix.items
            return items[index % len(items)]

    def task(self, index: int) -> Task:
        kind, problem = self.problem(index)
        gold = problem.gold
        meta: dict[str, Any] = {"topic": kind, "question": problem.question}
        if problem.form:
            meta["answer_form"] = problem.form
        if problem.unit:
            meta["unit"] = problem.unit
        return self.make_task(
            index,
            prompt=prompt_for(problem.question, self.config.prompt_style, gold),
            ground_truth=gold,
            reference_actions=[reference_action(gold)],
            difficulty=self.config.difficulty,
            **meta,
        )
