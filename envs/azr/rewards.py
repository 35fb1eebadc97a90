"""AZR's reward rules (Absolute Zero, arXiv 2505.03335; docs/populora.md), as pure functions for the population loop.

Proposer: learnability r = 1 - s (s = mean solve rate of the solver samples) when 0 < s < 1, else 0; the
training scalar is -1 for a proposal that fails format/validity, -0.5 for a valid one with r = 0 (trivial or
unsolvable), else r. Solver: 1 if right; in training -1 for a format failure and -0.5 for a wrong answer.
"""

from __future__ import annotations

from collections.abc import Sequence

FORMAT_PENALTY = -1.0
ZERO_LEARNABILITY_PENALTY = -0.5
WRONG_PENALTY = -0.5


def learnability(solved: Sequence[bool | float]) -> float:
    """1 - mean solve rate, zeroed when every or no solver sample succeeded (no signal for the proposer)."""
    if not solved:
        return 0.0
    rate = sum(float(s) for s in solved) / len(solved)
    return 0.0 if rate <= 0.0 or rate >= 1.0 else 1.0 - rate


def proposer_reward(valid: bool, solved: Sequence[bool | float]) -> float:
    """The proposer's training reward for one proposal."""
    if not valid:
        return FORMAT_PENALTY
    value = learnability(solved)
    return value if value > 0.0 else ZERO_LEARNABILITY_PENALTY


def solver_reward(valid_format: bool, correct: bool, *, train: bool = True) -> float:
    """The solver's reward: train scale (-1 / -0.5 / 1) or test scale (0 / 1)."""
    if not train:
        return float(correct)
    if not valid_format:
        return FORMAT_PENALTY
    return 1.0 if correct else WRONG_PENALTY
