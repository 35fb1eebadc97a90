"""Problem families of the procedural math generator, each a pure function of (rng, difficulty).

A family returns the question text and the exact answer as a `Fraction`; difficulty 1 is trivial (single-digit
addition in `arithmetic`, small enough for a 135M model to learn in a short RL demo), 5 takes several steps.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable
from fractions import Fraction

from .numeric import format_number

Problem = tuple[str, Fraction]
Family = Callable[[random.Random, int], Problem]


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
    """A fraction operand; parenthesised when negative or (with `group`) next to × or ÷, where `a/b ÷ c/d` is ambiguous."""
    text = format_number(value)
    return f"({text})" if value < 0 or (group and value.denominator != 1) else text


# ---- arithmetic -------------------------------------------------------------------------------------------------
def arithmetic(rng: random.Random, difficulty: int) -> Problem:
    if difficulty == 1:
        a, b = rng.randint(0, 9), rng.randint(0, 9)
        return f"What is {a} + {b}?", Fraction(a + b)
    if difficulty == 2:
        a, b = rng.randint(10, 99), rng.randint(10, 99)
        if rng.random() < 0.5:
            return f"What is {a} + {b}?", Fraction(a + b)
        return f"What is {a} - {b}?", Fraction(a - b)
    if difficulty == 3:
        a, b, c = rng.randint(2, 12), rng.randint(2, 12), rng.randint(1, 99)
        if rng.random() < 0.5:
            return f"What is {a} × {b} + {c}?", Fraction(a * b + c)
        return f"What is {c} - {a} × {b}?", Fraction(c - a * b)
    if difficulty == 4:
        a, b, c, d = rng.randint(-30, 50), rng.randint(-30, 50), rng.randint(2, 15), rng.randint(-99, 99)
        return f"What is ({a} - {_paren(b)}) × {c} {_signed(d)}?", Fraction((a - b) * c + d)
    divisor, quotient = rng.randint(2, 19), rng.randint(-40, 40)
    a, b = rng.randint(11, 99), rng.randint(-25, 25)
    c = a * b - quotient * divisor
    return f"What is ({a} × {_paren(b)} - {_paren(c)}) ÷ {divisor}?", Fraction(quotient)


# ---- fractions --------------------------------------------------------------------------------------------------
def _fraction(rng: random.Random, max_den: int, signed: bool = False) -> Fraction:
    den = rng.randint(2, max_den)
    num = rng.randint(1, den * 2 - 1)
    value = Fraction(num, den)
    return -value if signed and rng.random() < 0.4 else value


def fractions(rng: random.Random, difficulty: int) -> Problem:
    tail = " Give the answer as a fraction in lowest terms, or as an integer."
    if difficulty == 1:
        den = rng.randint(2, 9)
        a, b = rng.randint(1, den - 1), rng.randint(1, den - 1)
        return f"What is {a}/{den} + {b}/{den}?{tail}", Fraction(a, den) + Fraction(b, den)
    if difficulty == 2:
        x, y = _fraction(rng, 10), _fraction(rng, 10)
        if rng.random() < 0.5:
            return f"What is {_frac(x)} + {_frac(y)}?{tail}", x + y
        return f"What is {_frac(x)} - {_frac(y)}?{tail}", x - y
    if difficulty == 3:
        x, y = _fraction(rng, 12), _fraction(rng, 12)
        if rng.random() < 0.5:
            return f"What is {_frac(x, True)} × {_frac(y, True)}?{tail}", x * y
        return f"What is {_frac(x, True)} ÷ {_frac(y, True)}?{tail}", x / y
    if difficulty == 4:
        x, y, z = _fraction(rng, 12), _fraction(rng, 12), _fraction(rng, 12)
        return f"What is {_frac(x)} + {_frac(y, True)} × {_frac(z, True)}?{tail}", x + y * z
    x, y, z = _fraction(rng, 15, True), _fraction(rng, 15, True), _fraction(rng, 15, True)
    return f"What is ({_frac(x)} - {_frac(y)}) ÷ {_frac(z, True)}?{tail}", (x - y) / z


# ---- linear equations -------------------------------------------------------------------------------------------
def linear(rng: random.Random, difficulty: int) -> Problem:
    ask = " Solve for x."
    if difficulty == 1:
        x, a = rng.randint(0, 20), rng.randint(1, 20)
        return f"x + {a} = {x + a}.{ask}", Fraction(x)
    if difficulty == 2:
        x, a, b = rng.randint(-10, 10), rng.randint(2, 9), _nonzero(rng, -20, 20)
        return f"{_linear(a, b)} = {a * x + b}.{ask}", Fraction(x)
    if difficulty == 3:
        x = rng.randint(-12, 12)
        a = _nonzero(rng, -9, 9)
        c = _nonzero(rng, -9, 9)
        while c == a:
            c = _nonzero(rng, -9, 9)
        b = rng.randint(-30, 30)
        d = a * x + b - c * x
        return f"{_linear(a, b)} = {_linear(c, d)}.{ask}", Fraction(x)
    if difficulty == 4:
        a, b, c = rng.randint(2, 12), _nonzero(rng, -30, 30), rng.randint(-30, 30)
        return f"{_linear(a, b)} = {c}.{ask} Give x as a fraction in lowest terms or an integer.", Fraction(c - b, a)
    a, b, c = rng.randint(2, 9), rng.randint(1, 9), rng.randint(-20, 20)
    d = rng.randint(2, 9)
    while d == a:
        d = rng.randint(2, 9)
    e, f = rng.randint(1, 9), rng.randint(-20, 20)
    # a(x + b) + c = d(x - e) + f  =>  (a - d) x = d(-e) + f - a b - c
    answer = Fraction(-d * e + f - a * b - c, a - d)
    question = f"{a}(x + {b}) {_signed(c)} = {d}(x - {e}) {_signed(f)}.{ask}"
    return question + " Give x as a fraction in lowest terms or an integer.", answer


# ---- modular arithmetic -----------------------------------------------------------------------------------------
_PRIMES = [p for p in range(3, 100) if all(p % q for q in range(2, int(p**0.5) + 1))]


def modular(rng: random.Random, difficulty: int) -> Problem:
    if difficulty == 1:
        a, m = rng.randint(10, 100), rng.randint(2, 10)
        return f"What is the remainder when {a} is divided by {m}?", Fraction(a % m)
    if difficulty == 2:
        a, b, m = rng.randint(10, 99), rng.randint(10, 99), rng.randint(3, 20)
        return f"What is ({a} × {b}) mod {m}?", Fraction(a * b % m)
    if difficulty == 3:
        a, k, m = rng.randint(2, 30), rng.randint(5, 60), rng.randint(5, 50)
        return f"What is {a}^{k} mod {m}?", Fraction(pow(a, k, m))
    if difficulty == 4:
        m = rng.choice(_PRIMES[3:])
        a = rng.randint(2, m - 1)
        question = f"Find the integer x with 0 ≤ x < {m} such that {a}x ≡ 1 (mod {m})."
        return question, Fraction(pow(a, -1, m))
    m1, m2 = rng.sample(_PRIMES[:12], 2)
    r1, r2 = rng.randint(0, m1 - 1), rng.randint(0, m2 - 1)
    x = next(v for v in range(m1 * m2) if v % m1 == r1 and v % m2 == r2)
    question = f"Find the smallest non-negative integer x with x ≡ {r1} (mod {m1}) and x ≡ {r2} (mod {m2})."
    return question, Fraction(x)


# ---- combinatorics word problems --------------------------------------------------------------------------------
_NAMES = ["Ana", "Ben", "Chloe", "Dev", "Emma", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kofi", "Lena"]
_WORDS = ["LEVEL", "BANANA", "PEPPER", "COOKIE", "LETTER", "BALLOON", "MISSISSIPPI", "COFFEE", "ELEVEN", "TOMATO"]


def _multinomial(word: str) -> int:
    count = math.factorial(len(word))
    for repeats in Counter(word).values():
        count //= math.factorial(repeats)
    return count


def combinatorics(rng: random.Random, difficulty: int) -> Problem:
    name = rng.choice(_NAMES)
    if difficulty == 1:
        shirts, pants = rng.randint(2, 9), rng.randint(2, 9)
        question = (
            f"{name} has {shirts} shirts and {pants} pairs of pants. "
            "How many different outfits of one shirt and one pair of pants can they make?"
        )
        return question, Fraction(shirts * pants)
    if difficulty == 2:
        books = rng.randint(3, 7)
        question = f"In how many different orders can {name} arrange {books} different books on a shelf?"
        return question, Fraction(math.factorial(books))
    if difficulty == 3:
        n = rng.randint(6, 15)
        k = rng.randint(2, 4)
        if rng.random() < 0.5:
            question = f"A club has {n} members. In how many ways can a committee of {k} members be chosen?"
            return question, Fraction(math.comb(n, k))
        question = (
            f"{n} runners take part in a race. In how many ways can the gold, silver and bronze medals be awarded?"
        )
        return question, Fraction(math.perm(n, 3))
    if difficulty == 4:
        word = rng.choice(_WORDS)
        return f"How many distinct arrangements of the letters of the word {word} are there?", Fraction(
            _multinomial(word)
        )
    if rng.random() < 0.5:
        men, women, k = rng.randint(4, 9), rng.randint(3, 8), rng.randint(3, 5)
        question = (
            f"A team of {k} people is chosen from {men} men and {women} women. "
            "How many possible teams include at least one woman?"
        )
        return question, Fraction(math.comb(men + women, k) - math.comb(men, k))
    red, blue = rng.randint(2, 8), rng.randint(2, 8)
    question = (
        f"A bag holds {red} red and {blue} blue marbles. {name} draws two marbles without replacement. "
        "What is the probability that both are red? Give the answer as a fraction in lowest terms."
    )
    return question, Fraction(math.comb(red, 2), math.comb(red + blue, 2))


FAMILIES: dict[str, Family] = {
    "arithmetic": arithmetic,
    "fractions": fractions,
    "linear": linear,
    "modular": modular,
    "combinatorics": combinatorics,
}
