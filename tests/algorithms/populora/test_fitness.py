"""Cross-evaluation fitness by hand."""

from __future__ import annotations

import pytest

from rlvr_gym.algorithms.populora.fitness import Attempt, judges, student_fitness, teacher_fitness


def test_partner_is_excluded_unless_alone():
    assert judges(0, 2) == [1] and judges(1, 3) == [0, 2] and judges(0, 1) == [0]


def test_teacher_fitness_uses_only_other_students():
    attempts = [
        Attempt(0, 0, 0, (True, True)),  # partner of teacher 0: ignored
        Attempt(0, 0, 1, (True, False, False, False)),  # s = 0.25 -> 0.75
        Attempt(0, 1, 1, (True, True)),  # s = 1 -> 0
        Attempt(1, 0, 0, (False, True)),  # s = 0.5 -> 0.5
    ]
    valid = [[True, True, False], [True]]
    fit = teacher_fitness(2, valid, attempts, 2)
    assert fit == pytest.approx([0.75 / 3, 0.5])
    assert student_fitness(2, attempts) == pytest.approx([3 / 4, 3 / 6])
    assert student_fitness(3, attempts)[2] == 0.0
