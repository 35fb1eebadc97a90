"""Generator: per-index determinism, config validation, and answers checked by recomputing them independently."""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from fractions import Fraction

import pytest
from pydantic import ValidationError

from rlvr_gym.envs.math.families import FAMILIES
from rlvr_gym.envs.math.generator import MathGenerator, MathGeneratorConfig, build_task
from rlvr_gym.envs.math.verifier import verify_answer

FAMILY_NAMES = sorted(FAMILIES)
EXACT = re.compile(r"^-?\d+(/\d+)?$")


def _evaluate(expression: str) -> Fraction:
    """Evaluate a printed arithmetic expression exactly (integers become Fractions)."""
    expression = expression.replace("×", "*").replace("÷", "/")
    assert re.fullmatch(r"[\d\s+\-*/()]+", expression), expression
    return eval(re.sub(r"\d+", lambda m: f"Fraction({m.group(0)})", expression), {"Fraction": Fraction})


def _linear_holds(equation: str, x: Fraction) -> bool:
    lhs, rhs = equation.split("=")

    def side(text: str) -> Fraction:
        text = re.sub(r"(\d)\s*(x|\()", r"\1*\2", text.strip())
        text = re.sub(r"\d+", lambda m: f"Fraction({m.group(0)})", text)
        return eval(text, {"Fraction": Fraction, "x": x})

    return side(lhs) == side(rhs)


def _recompute(family: str, question: str, answer: Fraction) -> bool:
    """An independent reading of the question text that must agree with the generator's answer."""
    if family in ("arithmetic", "fractions"):
        expression = re.match(r"What is (.+?)\?", question).group(1)
        return _evaluate(expression) == answer
    if family == "linear":
        return _linear_holds(question.split(". Solve")[0], answer)
    if family == "modular":
        if m := re.match(r"What is the remainder when (\d+) is divided by (\d+)\?", question):
            return int(m.group(1)) % int(m.group(2)) == answer
        if m := re.match(r"What is \((\d+) × (\d+)\) mod (\d+)\?", question):
            return int(m.group(1)) * int(m.group(2)) % int(m.group(3)) == answer
        if m := re.match(r"What is (\d+)\^(\d+) mod (\d+)\?", question):
            return pow(int(m.group(1)), int(m.group(2)), int(m.group(3))) == answer
        if m := re.search(r"0 ≤ x < (\d+) such that (\d+)x ≡ 1", question):
            m_, a = int(m.group(1)), int(m.group(2))
            return 0 <= answer < m_ and a * answer % m_ == 1
        pairs = [(int(r), int(m_)) for r, m_ in re.findall(r"x ≡ (\d+) \(mod (\d+)\)", question)]
        return answer >= 0 and all(answer % m_ == r for r, m_ in pairs) and answer < math.prod(m_ for _, m_ in pairs)
    numbers = [int(n) for n in re.findall(r"\d+", question)]
    if "outfits" in question:
        return answer == numbers[0] * numbers[1]
    if "books on a shelf" in question:
        return answer == math.factorial(numbers[0])
    if "committee" in question:
        return answer == math.comb(numbers[0], numbers[1])
    if "medals" in question:
        return answer == numbers[0] * (numbers[0] - 1) * (numbers[0] - 2)
    if "letters of the word" in question:
        word = re.search(r"word ([A-Z]+)", question).group(1)
        return answer == len(set(itertools.permutations(word))) if len(word) <= 8 else answer > 0
    if "at least one woman" in question:
        k, men, women = numbers[:3]
        return answer == math.comb(men + women, k) - math.comb(men, k)
    red, blue = numbers[:2]
    return answer == Fraction(red * (red - 1), (red + blue) * (red + blue - 1))


@pytest.mark.parametrize("family", FAMILY_NAMES)
@pytest.mark.parametrize("difficulty", [1, 2, 3, 4, 5])
def test_answers_are_right_exact_and_verifiable(family: str, difficulty: int) -> None:
    for index in range(12):
        task = build_task(family, difficulty, seed=11, index=index)
        gold = task.ground_truth
        assert EXACT.match(gold), gold
        assert _recompute(family, task.metadata["question"], Fraction(gold)), (task.metadata["question"], gold)
        assert "\\boxed{}" in task.prompt
        assert verify_answer(task.reference_actions[0], gold).passed
        assert task.metadata == {
            "source": "rlvr_gym.math.generator",
            "index": index,
            "seed": 11,
            "difficulty": difficulty,
            "family": family,
            "question": task.metadata["question"],
        }


def test_difficulty_one_arithmetic_is_single_digit_addition() -> None:
    for index in range(50):
        question = build_task("arithmetic", 1, 0, index).metadata["question"]
        assert re.fullmatch(r"What is \d \+ \d\?", question), question


def test_same_seed_and_index_same_task_across_instances() -> None:
    config = MathGeneratorConfig(difficulty=3, seed=5)
    a, b = MathGenerator(config), MathGenerator(MathGeneratorConfig(difficulty=3, seed=5))
    assert [a.task(i) for i in range(40)] == [b.task(i) for i in range(40)]
    assert a.task(7) != MathGenerator(MathGeneratorConfig(difficulty=3, seed=6)).task(7)
    assert len({a.task(i).id for i in range(200)}) == 200


def test_task_rebuilt_from_metadata() -> None:
    task = MathGenerator(MathGeneratorConfig(difficulty=4, seed=9)).task(123)
    meta = task.metadata
    assert build_task(meta["family"], meta["difficulty"], meta["seed"], meta["index"]) == task


def test_family_mix_follows_weights() -> None:
    generator = MathGenerator(MathGeneratorConfig(families={"linear": 3.0, "modular": 1.0, "fractions": 0.0}))
    counts = Counter(generator.family_of(i) for i in range(2000))
    assert set(counts) == {"linear", "modular"}
    assert 0.68 < counts["linear"] / 2000 < 0.82
    mixed = Counter(MathGenerator().family_of(i) for i in range(1000))
    assert set(mixed) == set(FAMILY_NAMES)


def test_config_validation_and_size() -> None:
    assert MathGeneratorConfig(families="linear").families == {"linear": 1.0}
    assert MathGeneratorConfig(families=["linear", "modular"]).families == {"linear": 1.0, "modular": 1.0}
    for bad in ({"difficulty": 0}, {"difficulty": 6}, {"families": ["geometry"]}, {"families": {}}, {"size": 0}):
        with pytest.raises(ValidationError):
            MathGeneratorConfig(**bad)
    sized = MathGenerator(MathGeneratorConfig(size=10))
    assert len(sized) == 10
    with pytest.raises(IndexError):
        sized.task(10)
    with pytest.raises(TypeError):
        len(MathGenerator())
