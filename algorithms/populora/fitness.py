"""Cross-evaluation fitness: teachers are judged by students other than their partner, students by all teachers.

METHODS.md 3.2 [INFERRED]: teacher fitness = mean learnability (1 - s, zeroed at s in {0, 1}) of its proposals,
measured with the students of the other pairs (a teacher and its own partner could collude on private
conventions); an invalid proposal counts 0. Student fitness = mean solve rate over every valid proposal it
attempted. With a single student (1T-1S) the partner is the only judge, as in plain AZR.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rlvr_gym.envs.azr.rewards import learnability


@dataclass(frozen=True)
class Attempt:
    """One student's samples on one teacher's proposal."""

    teacher: int
    proposal: int  # index of the proposal within the teacher's batch
    student: int
    solved: tuple[bool, ...]


def judges(teacher: int, n_students: int) -> list[int]:
    """Students that evaluate `teacher`: everyone but its partner (same index), or the partner when alone."""
    others = [s for s in range(n_students) if s != teacher]
    return others or list(range(n_students))


def teacher_fitness(
    n_teachers: int, valid: Sequence[Sequence[bool]], attempts: Sequence[Attempt], n_students: int
) -> list[float]:
    """Mean learnability per teacher; `valid[t][p]` says whether proposal p of teacher t was valid."""
    out = []
    for t in range(n_teachers):
        allowed = set(judges(t, n_students))
        scores = []
        for p, ok in enumerate(valid[t]):
            solved = [
                x for a in attempts if (a.teacher, a.proposal) == (t, p) and a.student in allowed for x in a.solved
            ]
            scores.append(learnability(solved) if ok else 0.0)
        out.append(sum(scores) / len(scores) if scores else 0.0)
    return out


def student_fitness(n_students: int, attempts: Sequence[Attempt]) -> list[float]:
    """Mean solve rate per student over all its samples (0 when it attempted nothing)."""
    out = []
    for s in range(n_students):
        samples = [x for a in attempts if a.student == s for x in a.solved]
        out.append(sum(samples) / len(samples) if samples else 0.0)
    return out
