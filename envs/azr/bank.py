"""The seed programs: trusted, deterministic functions with input generators (AZR's seed buffer, written here).

They seed the solve tasks of the envs, the reference examples shown to proposers and the population's task buffer.
Being our own code, their outputs are computed in this process (`output_of`); `tests/azr` checks that the sandbox's
deterministic mode gives the same values for every one of them.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SeedProgram:
    name: str
    source: str
    message: str  # the hint an induction solver gets (what AZR's proposer writes as the "message")
    make_input: Callable[[random.Random], tuple]
    many_outputs: bool = True  # False: few distinct outputs, so abduction prompts would repeat (not used there)


def _ints(rng: random.Random, lo: int = -9, hi: int = 20, n: tuple[int, int] = (2, 7)) -> list[int]:
    return [rng.randint(lo, hi) for _ in range(rng.randint(*n))]


def _word(rng: random.Random, n: tuple[int, int] = (3, 9)) -> str:
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(*n)))


SEEDS: tuple[SeedProgram, ...] = (
    SeedProgram("running_max", "def f(xs):\n    out, best = [], None\n    for x in xs:\n"
                "        best = x if best is None or x > best else best\n        out.append(best)\n    return out",
                "prefix maxima of a list", lambda r: (_ints(r),)),
    SeedProgram("alt_sum", "def f(xs):\n    return sum(x if i % 2 == 0 else -x for i, x in enumerate(xs))",
                "alternating sum", lambda r: (_ints(r),), many_outputs=False),
    SeedProgram("rotate", "def f(s, k):\n    k = k % len(s) if s else 0\n    return s[k:] + s[:k]",
                "rotate a string left", lambda r: (_word(r), r.randint(0, 12))),
    SeedProgram("vowel_count", "def f(s):\n    counts = {}\n    for ch in s:\n        if ch in 'aeiou':\n"
                "            counts[ch] = counts.get(ch, 0) + 1\n    return counts",
                "count vowels in order of first appearance", lambda r: (_word(r, (5, 14)),), many_outputs=False),
    SeedProgram("digit_steps", "def f(n):\n    steps = 0\n    while n >= 10:\n"
                "        n = sum(int(d) for d in str(n))\n        steps += 1\n    return (n, steps)",
                "digital root and how many digit sums it takes", lambda r: (r.randint(0, 10**9),), many_outputs=False),
    SeedProgram("pair_sums", "def f(xs, target):\n    seen, pairs = [], []\n    for x in xs:\n"
                "        if target - x in seen:\n            pairs.append((target - x, x))\n        seen.append(x)\n"
                "    return pairs", "pairs that sum to a target, in discovery order",
                lambda r: (_ints(r, 0, 9, (3, 8)), r.randint(3, 14)), many_outputs=False),
    SeedProgram("run_length", "def f(s):\n    out = []\n    for ch in s:\n        if out and out[-1][0] == ch:\n"
                "            out[-1] = (ch, out[-1][1] + 1)\n        else:\n            out.append((ch, 1))\n"
                "    return out", "run-length encoding",
                lambda r: ("".join(r.choice("abcd") for _ in range(r.randint(6, 14))),)),
    SeedProgram("collatz", "def f(n):\n    seq = [n]\n    while n != 1 and len(seq) < 40:\n"
                "        n = n // 2 if n % 2 == 0 else 3 * n + 1\n        seq.append(n)\n    return len(seq)",
                "Collatz sequence length (capped at 40)", lambda r: (r.randint(1, 10**6),), many_outputs=False),
    SeedProgram("sorted_unique", "def f(xs):\n    return sorted(set(xs), reverse=True)[:3]",
                "three largest distinct values", lambda r: (_ints(r, 0, 12, (3, 9)),), many_outputs=False),
    SeedProgram("word_lengths", "def f(words):\n    out = {}\n    for w in words:\n"
                "        out.setdefault(len(w), []).append(w)\n    return out", "group words by length",
                lambda r: ([_word(r, (1, 5)) for _ in range(r.randint(2, 5))],)),
    SeedProgram("matrix_diag", "def f(n, k):\n    return [[(i * n + j) % k for j in range(n)][i] for i in range(n)]",
                "diagonal of a modular matrix", lambda r: (r.randint(1, 30), r.randint(2, 60)), many_outputs=False),
    SeedProgram("caesar", "def f(s, k):\n    return ''.join(chr((ord(c) - 97 + k) % 26 + 97) for c in s)",
                "Caesar shift of lowercase text", lambda r: (_word(r), r.randint(1, 25))),
    SeedProgram("window_max", "def f(xs, w):\n    w = max(1, min(w, len(xs)))\n"
                "    return [max(xs[i:i + w]) for i in range(len(xs) - w + 1)] if xs else []",
                "sliding window maxima", lambda r: (_ints(r, -50, 50, (4, 9)), r.randint(1, 3))),
    SeedProgram("bits", "def f(n):\n    return (bin(n).count('1'), n & -n, n.bit_length())",
                "popcount, lowest set bit and bit length", lambda r: (r.randint(1, 10**9),), many_outputs=False),
)
BY_NAME = {seed.name: seed for seed in SEEDS}


def output_of(source: str, args: tuple) -> Any:
    """The value of `f(*args)` for one of OUR seed programs (trusted code; never call this on a model's program)."""
    namespace: dict[str, Any] = {}
    exec(compile(source, "<seed>", "exec"), namespace)  # noqa: S102 - trusted seed code only
    return namespace["f"](*args)


def distinct_inputs(seed: SeedProgram, rng: random.Random, count: int, max_draws: int = 200) -> list[tuple]:
    """Up to `count` distinct inputs of a seed program (by repr), in draw order."""
    seen: dict[str, tuple] = {}
    for _ in range(max_draws):
        args = seed.make_input(rng)
        seen.setdefault(repr(args), args)
        if len(seen) >= count:
            break
    return list(seen.values())
