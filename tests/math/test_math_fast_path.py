"""Differential test of the math verifier's fast path: `fast_verdict` == `full_verify` wherever the fast path decides.

The fast path is a verifier too, and a policy that has read the source will look for a reply on which the two
disagree. Every reply below is scored both ways and the verdicts (reward, passed, valid, components, feedback,
error) must be identical: the held corpus of `test_math_differential` (every task kind, difficulty and split: golds
in every notation, near misses, reasoning/code/quote tricks), each task's `wrong_answers`, the bundled dataset and
one-shot prompts, hand-written adversarial replies (signs, leading zeros, huge numbers, Unicode digits, prompt
echoes, several boxes, nested braces, zero/negative denominators, whitespace, odd spellings of `\\boxed`) and a
seeded fuzz over the characters the extraction rule reacts to.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from test_math_differential import generate_items

import rlvr_gym
from rlvr_gym import Task
from rlvr_gym.envs.math.tasks import KINDS, MathTasks
from rlvr_gym.envs.math.verifier import echoes, fast_verdict, full_verify, verify, wrong_answers

WEIGHTS = [(0.0, 1.0), (0.5, 1.0), (1.0, 0.0), (0.25, 0.75), (0, 1), (1, 2)]


def _check(task: Task, reply: str, weights: tuple[float, float] = (0.0, 1.0)) -> bool:
    """Assert both paths agree on `reply`; True when the fast path decided it (else it deferred to the full rule)."""
    fast = fast_verdict(task, reply, *weights)
    full = full_verify(task, [reply], format_weight=weights[0], correct_weight=weights[1])
    dispatched = verify(task, [reply], format_weight=weights[0], correct_weight=weights[1])
    assert dispatched.model_dump() == full.model_dump(), (task.ground_truth, reply)
    if fast is None:
        return False
    assert fast.model_dump() == full.model_dump(), (task.ground_truth, task.metadata.get("answer_form"), reply)
    assert type(fast.reward) is type(full.reward) and fast.components == full.components
    return True


def _tasks_per_kind(per_cell: int = 1) -> list[Task]:
    tasks = []
    for kind in sorted(KINDS):
        for difficulty in range(1, 6):
            for style in ("plain", "one_shot"):
                source = MathTasks(families=[kind], difficulty=difficulty, seed=7, prompt_style=style)
                tasks += [source.task(i) for i in range(per_cell)]
    return tasks


def _adversarial(task: Task) -> Iterator[str]:
    gold = str(task.ground_truth)
    bare = gold.lstrip("-")
    sign = "-" if gold.startswith("-") else ""
    num, _, den = bare.partition("/")
    wrapped = [
        gold,
        f"+{gold}",
        f"-{gold}",
        f"--{bare}",
        f"+-{bare}",
        f"−{bare}",
        f"- {bare}",
        f"{sign}00{bare}",
        f"{sign}0{num}.0" if not den else f"{sign}0{num}/0{den}",
        f"{sign}{num}.{'0' * 59}" if not den else f"{sign}{num}0/{den}0",
        f"{gold}.",
        f"{gold}.0",
        f".{bare}",
        f"{gold} ",
        f" {gold}",
        f"{gold}\u200b",
        f"{gold}\u00a0",
        f"{{{gold}}}",
        f"{gold}{{}}",
        f"\\boxed{{{gold}}}",
        f"{gold}\\%",
        f"{gold}%",
        f"{gold} cm",
        f"x = {gold}",
        f"${gold}$",
        f"{gold}/0",
        f"{bare}/-1",
        f"-{bare}/-1",
        f"{bare}/1",
        f"0/{bare}" if bare != "0" else "0/0",
        "9" * 59,
        "9" * 60,
        "9" * 61,
        "1" + "0" * 60,
        f"{'9' * 60}.{'9' * 60}",
        f"{'9' * 60}/{'9' * 59}8",
        f"0.{'0' * 59}1",
        "４２",
        "٤٢",
        f"{gold}²",
        "1_000",
        "1,000",
        "1e3",
        "0x10",
    ]
    for content in wrapped:
        yield f"The final answer is \\boxed{{{content}}}."
    yield from (
        f"\\boxed{{{gold}}}",
        f"\\boxed{{{gold}}}\\boxed{{{gold}}}",
        f"\\boxed{{{gold}}} or \\boxed{{{gold}1}}",
        f"\\boxed{{{gold}}}}}",
        f"{{\\boxed{{{gold}}}",
        f"\\boxed{{{gold}",
        f"\\boxed {gold}",
        f"\\boxed\n{{{gold}}}",
        f"\\Boxed{{{gold}}}",
        f"\\\\boxed{{{gold}}}",
        f"\\fbox{{{gold}}}",
        f"boxed{{{gold}}}",
        f"\\mathbf{{\\boxed{{{gold}}}}}",
        f"<think>\\boxed{{{gold}}}</think>",
        f"<think>x</think>\\boxed{{{gold}}}",
        f"`\\boxed{{{gold}}}`",
        f'"\\boxed{{{gold}}}"',
        f"“\\boxed{{{gold}}}”",
        f"> \\boxed{{{gold}}}",
        f"```\n\\boxed{{{gold}}}\n```",
        f"{'x' * 3990}\\boxed{{{gold}}}{'y' * 4010}",
        f"{'x' * 4000}\\boxed{{{gold}}}",
        f"{'x' * 4001}\\boxed{{{gold}}}",
        "x\n" * 60000 + f"\\boxed{{{gold}}}",
        f"\t\n \\boxed{{{gold}}}\t\n ",
        f"\x00\\boxed{{{gold}}}\x00",
    )
    for text in echoes(task):  # an echoed prompt commits to nothing, whatever it holds
        yield f"{text}\n\\boxed{{{gold}}}"
        yield f"\\boxed{{{gold}}}\n{text}"
        yield f"{text}{text}"
    question = str(task.metadata.get("question") or "")
    yield f"{question[: len(question) // 2]}\\boxed{{{gold}}}"


FUZZ_PIECES = [
    "\\boxed{", "\\fbox{", "\\boxed ", "{", "}", "}}", "-", "+", "−", "/", ".", " ", "\n", "0", "1", "7", "12", "00",
    "3/4", "<think>", "</think>", "`", "```", '"', "“", "”", ">", "%", "\\%", "\\frac", "\\sqrt", "x", "=", "$", "５",
]  # fmt: skip
NUMBER_PIECES = ["", "-", "+", "0", "00", "1", "7", "12", "999", ".", "/", "5", "/0", ".5"]


def _fuzz(rng: random.Random, gold: str) -> str:
    """Noise, one box holding a number-like content (the gold, or pieces of numbers), noise; each part mutated by
    the characters the extraction rule reacts to with some probability."""

    def noise(pieces: list[str]) -> str:
        return "".join(rng.choice(pieces) for _ in range(rng.randint(0, 4)))

    plain = ["The answer is ", " ", "\n", "so ", "x", "1", "{", "}", ".", "$"]
    content = gold if rng.random() < 0.3 else "".join(rng.choice(NUMBER_PIECES) for _ in range(rng.randint(1, 4)))
    parts = [noise(plain), "\\boxed{", content, "}", noise(plain)]
    for _ in range(rng.choice([0, 0, 1, 2])):
        parts.insert(rng.randint(0, len(parts)), rng.choice(FUZZ_PIECES + [gold]))
    return "".join(parts)


def test_fast_path_equals_full_path_on_the_held_corpus():
    items = generate_items()
    decided = 0
    for item in items:
        decided += _check(item.task, item.response)
    assert len(items) > 5000 and decided > len(items) // 4  # the fast path really decides the common replies


def test_fast_path_equals_full_path_on_near_misses_datasets_and_weights():
    dataset = rlvr_gym.make("rlvr/MathDataset-v0").unwrapped
    tasks = _tasks_per_kind() + [dataset.get_task(i) for i in range(dataset.num_tasks)]
    rng = random.Random(37)
    decided = 0
    for task in tasks:
        replies = [task.reference_actions[0], *(t[-1] for t in wrong_answers(task, rng))]
        for weights in WEIGHTS:
            decided += sum(_check(task, reply, weights) for reply in replies)
    assert decided > len(tasks) * len(WEIGHTS)


def test_fast_path_equals_full_path_on_adversarial_replies():
    decided = total = 0
    for task in _tasks_per_kind():
        for reply in _adversarial(task):
            total += 1
            decided += _check(task, reply)
    assert decided > total // 10


def test_fast_path_equals_full_path_on_fuzzed_replies():
    rng = random.Random(2037)
    tasks = _tasks_per_kind()
    decided = 0
    for _ in range(6000):
        task = rng.choice(tasks)
        decided += _check(task, _fuzz(rng, str(task.ground_truth)), rng.choice(WEIGHTS))
    assert decided > 100


def test_fast_path_equals_full_path_when_the_prompt_is_a_number():
    """An echoed prompt is cut out before extraction; a prompt of bare digits can sit inside a box."""
    for prompt in ("7", "12", "-3/4", "0.5"):
        task = Task(id="math/train/0", prompt=prompt, ground_truth=prompt.lstrip("-"), metadata={"question": prompt})
        for reply in (f"\\boxed{{{prompt}}}", f"\\boxed{{1{prompt}}}", f"\\boxed{{{prompt}{prompt}}}", "\\boxed{5}"):
            _check(task, reply)


def test_fast_path_defers_what_it_cannot_decide():
    task = MathTasks(families=["arithmetic"], difficulty=1, seed=7).task(0)
    gold = str(task.ground_truth)
    assert fast_verdict(task, f"\\boxed{{{gold}}}") is not None
    for reply in (f"<think>a</think>\\boxed{{{gold}}}", f"\\boxed{{{gold}}} \\boxed{{{gold}}}", f"\\boxed{{{gold}/0}}"):
        assert fast_verdict(task, reply) is None
    radical = MathTasks(families=["radicals"], difficulty=3, seed=7).task(0)
    assert fast_verdict(radical, radical.reference_actions[0]) is None  # no rational gold: always the full rule
    assert verify(task, [12345]).model_dump() == full_verify(task, [12345]).model_dump()  # non-text replies


@pytest.mark.parametrize("weights", [(float("nan"), 1.0), (0.0, float("inf"))])
def test_non_finite_weights_raise_on_both_paths(weights):
    task = MathTasks(families=["arithmetic"], difficulty=1, seed=7).task(0)
    with pytest.raises(ValueError):
        verify(task, [task.reference_actions[0]], format_weight=weights[0], correct_weight=weights[1])
