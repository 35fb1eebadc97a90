"""Dataset loader: JSONL and parquet files, GSM8K/MATH answer normalisation, configurable fields."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import rlvr_gym
from rlvr_gym.envs.math.dataset import MathDatasetTasks, normalize_gold, sample_path
from rlvr_gym.envs.math.verifier import verify

ROWS = [
    {"question": "Ann has 3 apples and buys 4 more. How many apples?", "answer": "3 + 4 = 7\n#### 7"},
    {"question": "A shop sells 1,200 pens a day for 2 days. How many pens?", "answer": "1200 * 2\n#### 2,400"},
    {"problem": "Simplify $\\frac{2}{4}$.", "solution": "Divide by 2: $\\boxed{\\frac{1}{2}}$."},
    {"problem": "Solve $x^2 = 2$ for positive x.", "solution": "So $x = \\boxed{\\sqrt{2}}$."},
    {"question": "No answer here", "answer": ""},
    {"question": "", "answer": "#### 3"},
]


@pytest.mark.parametrize(
    ("raw", "gold"),
    [
        ("reasoning\n#### 42", "42"),
        ("#### 1,234", "1234"),
        ("#### -5", "-5"),
        ("so $\\boxed{\\dfrac{3}{4}}$.", "\\dfrac{3}{4}"),
        ("first \\boxed{1} then \\boxed{\\{1,2\\}}", "\\{1,2\\}"),
        ("$\\frac{\\pi}{2}$", "\\frac{\\pi}{2}"),
        ("17.", "17"),
        (12, "12"),
        ("", None),
        (None, None),
        ("\\boxed{}", None),
    ],
)
def test_normalize_gold(raw, gold) -> None:
    assert normalize_gold(raw) == gold


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def both_splits(files, **kwargs) -> list:
    """Every row's task, train split first (rows are split by question hash)."""
    tasks = []
    for split in ("train", "eval"):
        try:
            source = MathDatasetTasks(files, split=split, **kwargs)
        except ValueError as exc:
            assert "no " + split in str(exc)
            continue
        tasks += [source.task(i) for i in range(len(source))]
    return tasks


def test_jsonl_and_parquet_load_the_same_tasks(tmp_path: Path) -> None:
    jsonl = _write_jsonl(tmp_path / "mixed.jsonl", ROWS)
    columns = {key: [row.get(key) for row in ROWS] for key in ("question", "answer", "problem", "solution")}
    parquet = tmp_path / "mixed.parquet"
    pq.write_table(pa.table(columns), parquet)
    from_jsonl, from_parquet = both_splits(jsonl), both_splits(parquet)
    assert sorted(t.ground_truth for t in from_jsonl) == sorted(["7", "2400", "\\frac{1}{2}", "\\sqrt{2}"])
    assert [(t.prompt, t.ground_truth) for t in from_jsonl] == [(t.prompt, t.ground_truth) for t in from_parquet]
    assert sorted(t.metadata["row"] for t in from_jsonl) == [0, 1, 2, 3]
    for task in from_parquet:
        assert task.metadata["source"] == "mixed.parquet" and task.id.startswith("math/")
        assert verify(task, task.reference_actions).passed
        assert "\\boxed{}" in task.prompt


def test_configurable_fields_and_env(tmp_path: Path) -> None:
    rows = [{"q": f"What is {i} + {i}?", "a": f"#### {2 * i}", "answer": "wrong"} for i in range(40)]
    path = _write_jsonl(tmp_path / "custom.jsonl", rows)
    env = rlvr_gym.make("rlvr/MathDataset-v0", data_files=[str(path)], question_field="q", answer_field="a")
    held_out = rlvr_gym.make(
        "rlvr/MathDataset-v0", data_files=[str(path)], question_field="q", answer_field="a", split="eval"
    )
    assert env.num_tasks + held_out.num_tasks == 40 and held_out.num_tasks >= 1
    env.reset(seed=7)
    gold = env.task.ground_truth
    assert env.step(f"\\boxed{{{gold}}}")[1] == 1.0
    env.reset(seed=7)
    assert env.step("\\boxed{wrong}")[1] == 0.0


def test_edited_file_is_reloaded(tmp_path: Path) -> None:
    path = _write_jsonl(tmp_path / "d.jsonl", ROWS[:2])
    assert len(both_splits(path)) == 2
    _write_jsonl(path, ROWS[:2] + [{"question": "x", "answer": "#### 1"}])
    assert len(both_splits(path)) == 3


def test_max_rows_multiple_files_and_repeated_questions(tmp_path: Path) -> None:
    a = _write_jsonl(tmp_path / "a.jsonl", ROWS[:2])
    b = _write_jsonl(tmp_path / "b.jsonl", ROWS[2:4] + ROWS[:1])  # the first question again
    tasks = both_splits([a, b])
    assert len(tasks) == 4 and len({t.metadata["question"] for t in tasks}) == 4
    assert len(both_splits([a, b], max_rows=3)) == 3


def test_constraints_from_rows(tmp_path: Path) -> None:
    rows = [
        {"question": f"Reduce {2 * i}/{4 * i}.", "answer": "#### 1/2", "answer_form": "lowest_terms"}
        for i in range(1, 30)
    ]
    tasks = both_splits(_write_jsonl(tmp_path / "forms.jsonl", rows))
    assert all(t.metadata["answer_form"] == "lowest_terms" for t in tasks)
    assert verify(tasks[0], ["\\boxed{1/2}"]).passed and not verify(tasks[0], ["\\boxed{2/4}"]).passed
    with pytest.raises(ValueError, match="answer_form"):
        MathDatasetTasks(_write_jsonl(tmp_path / "bad.jsonl", [{**rows[0], "answer_form": "pretty"}]))


def test_bad_files(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no usable"):
        MathDatasetTasks(_write_jsonl(tmp_path / "empty.jsonl", ROWS[4:]))
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"question": "a", "answer": "#### 1"}\n{not json\n', encoding="utf-8")
    with pytest.raises(ValueError, match="broken.jsonl:2"):
        MathDatasetTasks(broken)
    with pytest.raises(ValueError, match="unsupported"):
        MathDatasetTasks(_write_jsonl(tmp_path / "data.csv", ROWS))


def test_bundled_sample() -> None:
    assert sample_path().is_file()
    tasks = both_splits(None)
    assert len(tasks) == 20
    assert all(task.ground_truth.replace(".", "", 1).isdigit() for task in tasks)
    task = next(t for t in tasks if t.ground_truth == "22.5")
    assert verify(task, ["She has \\boxed{22.50} dollars left."]).passed
    assert verify(task, ["She has \\boxed{\\$22.50}."]).passed
