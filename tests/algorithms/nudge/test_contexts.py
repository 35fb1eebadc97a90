"""Context sources: built-in hints, stored hints, agent-generated hints with a cache; none may leak the answer."""

from __future__ import annotations

import json

import pytest

from rlvr_gym.agent import Agent, AgentStep
from rlvr_gym.algorithms.nudge.contexts import (
    BUILTIN_MATH_HINTS,
    BuiltinMathHints,
    GeneratedContexts,
    StoredContexts,
    hint_tokens,
    leaks_answer,
    parse_numbered,
)
from rlvr_gym.algorithms.nudge.problem_hints import addition_hints, shows
from rlvr_gym.registry import make
from rlvr_gym.types import Task


def math_tasks(n: int = 40) -> list[Task]:
    env = make("rlvr/Math-v0")
    return [env.get_task(i) for i in range(n)]


def test_builtin_hints_cover_every_math_topic_and_never_contain_the_answer():
    source = BuiltinMathHints()
    tasks = math_tasks()
    assert {t.metadata["topic"] for t in tasks} <= set(BUILTIN_MATH_HINTS)
    for task in tasks:
        hints = source.contexts(task, 3)
        assert len(hints) == 3 and len(set(hints)) == 3
        assert hints == source.contexts(task, 3)  # deterministic
        for hint in hints:
            assert str(task.ground_truth).lower() not in hint_tokens(hint)


def test_leak_filter_catches_the_answer_as_a_token_only():
    assert leaks_answer("The answer is 42.", "42")
    assert leaks_answer("try x = 3/4", "3/4")
    assert leaks_answer("use $\\sqrt{2}$", "\\sqrt{2}")
    assert not leaks_answer("Use 420 as a bound", "42")
    assert not leaks_answer("anything", None)


def test_stored_hints_from_metadata_and_jsonl(tmp_path):
    task = Task(id="t/train/0", prompt="What is 6*7?", ground_truth="42", metadata={"hints": ["Multiply", "It is 42"]})
    assert StoredContexts().contexts(task, 2) == ["Multiply"]  # the leaking hint is dropped
    path = tmp_path / "hints.jsonl"
    path.write_text(json.dumps({"task_id": "t/train/1", "hints": ["Use a times table", "Double 21"]}) + "\n{broken\n")
    other = Task(id="t/train/1", prompt="What is 6*7?", ground_truth="42", metadata={"topic": "arithmetic"})
    assert StoredContexts(path).contexts(other, 2) == ["Use a times table", "Double 21"]
    padded = StoredContexts(path, fallback=BuiltinMathHints()).contexts(other, 3)
    assert padded[:2] == ["Use a times table", "Double 21"] and len(padded) == 3


class CountingHintAgent(Agent):
    """Test double: answers every hint request with a numbered list, one item of which leaks the answer."""

    def __init__(self) -> None:
        self.calls = 0

    async def act(self, ctx, observation):
        self.calls += 1
        assert "Problem:" in observation[-1].text()
        return AgentStep(text="Sure:\n1. Common denominator\n2) The result is 42\n3. Reduce the fraction\nDone.")


def test_generated_hints_are_cached_and_filtered(tmp_path):
    task = Task(id="t/train/2", prompt="x", ground_truth="42", metadata={"question": "What is 6*7?"})
    agent = CountingHintAgent()
    source = GeneratedContexts(tmp_path / "cache.jsonl", agent=agent, num_hints=3)
    assert source.contexts(task, 2) == ["Common denominator", "Reduce the fraction"]
    assert source.contexts(task, 2) == ["Common denominator", "Reduce the fraction"]
    assert agent.calls == 1
    # a fresh source reads the cache and never needs an agent
    assert GeneratedContexts(tmp_path / "cache.jsonl").contexts(task, 1) == ["Common denominator"]
    changed = task.model_copy(update={"metadata": {"question": "What is 6*8?"}})
    with pytest.raises(ValueError):
        GeneratedContexts(tmp_path / "cache.jsonl").contexts(changed, 1)


def test_parse_numbered_ignores_prose_and_is_bounded():
    assert parse_numbered("intro\n1. a\n- b\n* c\n10) d\nnot 2. this") == ["a", "b", "c", "d"]
    assert parse_numbered("\n" * 100_000 + "1. " + "x" * 1_000_000)[:1] in ([], ["x" * 496])


def test_addition_hints_are_the_problems_own_and_never_show_its_answer():
    for a in range(50):  # every MathAddition-v0 question
        for b in range(50):
            hints = addition_hints(f"What is {a} + {b}?")
            assert len(set(hints)) == 4
            assert not any(shows(h, a + b) for h in hints), (a, b, hints)
    assert addition_hints("What is 3 - 2?") == []
    task = make("rlvr/MathAddition-v0").get_task(3)
    assert task.metadata["question"] == "What is 9 + 18?"
    technique, distractor = BuiltinMathHints().contexts(task, 2)  # M = 2: the technique, then a distractor
    assert "0 + 10 = 10 and 9 + 8 = 17" in technique and distractor == "Subtract the smaller number: 18 - 9 = 9."
    assert BuiltinMathHints().contexts(make("rlvr/MathAddition-v0").get_task(4), 1) != [technique]  # per problem
    assert shows("so 27.", 27) and not shows("270 and 127", 27)
