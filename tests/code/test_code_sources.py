"""Task sources: the procedural generator, the MBPP-style JSONL loader and HumanEval, in the family template."""

from __future__ import annotations

import json

import pytest

from rlvr_gym.envs.code.generator import TEMPLATES
from rlvr_gym.envs.code.spec import spec_of
from rlvr_gym.envs.code.tasks import CodeGenTasks, MBPPTasks
from rlvr_gym.envs.code.verifier import score_many
from rlvr_gym.family import parse_task_id


def test_generator_is_deterministic_per_index():
    source = CodeGenTasks(seed=3, difficulty=3)
    assert source.task(7) == CodeGenTasks(seed=3, difficulty=3).task(7)
    assert source.task(7) != source.task(8)
    assert parse_task_id(source.task(7).id) == ("codegen", "train", 7)
    assert source.task(7).metadata | {"index": 7, "seed": 3, "difficulty": 3} == source.task(7).metadata


def test_generator_splits_are_disjoint():
    train = {CodeGenTasks(split="train").task(i).prompt for i in range(40)}
    evals = {CodeGenTasks(split="eval").task(i).prompt for i in range(40)}
    assert not train & evals


def test_generator_covers_every_template_and_references_pass(executor):
    tasks = [CodeGenTasks(seed=1, difficulty=5, templates=[name]).task(i) for name in TEMPLATES for i in range(2)]
    assert {t.metadata["template"] for t in tasks} == set(TEMPLATES)
    assert all(len(spec_of(t).asserts) == 6 for t in tasks)
    verdicts = score_many(tasks, [spec_of(t).reference_solution for t in tasks], executor=executor)
    assert [t.id for t, v in zip(tasks, verdicts, strict=True) if not v.passed] == []
    wrong = score_many(
        tasks, [f"def {t.metadata['entry_point']}(*a):\n    return 0\n" for t in tasks], executor=executor
    )
    assert all(v.components["tests"] < 1.0 for v in wrong)


def test_generator_rejects_unknown_templates():
    with pytest.raises(ValueError):
        CodeGenTasks(templates=["nope"]).task(0)


def test_bundled_mbpp_sample_passes(executor):
    source = MBPPTasks()
    tasks = [source.task(i) for i in range(len(source))]
    assert len(tasks) + len(MBPPTasks(split="eval")) == 10
    verdicts = score_many(tasks, [spec_of(t).reference_solution for t in tasks], executor=executor)
    assert all(v.passed for v in verdicts)


def test_mbpp_jsonl_shapes(tmp_path, executor):
    rows = [
        {
            "task_id": 11,
            "prompt": "Add two numbers.",
            "code": "def add(a, b):\n    return a + b",
            "test_imports": ["import math"],
            "test_list": ["assert add(1, 2) == 3", "assert math.isclose(add(0.1, 0.2), 0.3)"],
        },
        {
            "task_id": "X/1",
            "prompt": "def neg(x):\n",
            "entry_point": "neg",
            "canonical_solution": "    return -x\n",
            "test": "def check(candidate):\n    assert candidate(2) == -2\n    assert candidate(-3) == 3\n",
        },
    ]
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    tasks = [
        t
        for split in ("train", "eval")
        for source in [MBPPTasks(str(path), split=split)]
        for t in (source.task(i) for i in range(len(source)))
    ]
    assert {t.metadata["source_id"] for t in tasks} == {11, "X/1"} and len(tasks) == 2
    by_source = {t.metadata["source_id"]: t for t in tasks}
    assert spec_of(by_source[11]).entry_point == "add" and spec_of(by_source["X/1"]).test_style == "check"
    assert "assert add(1, 2) == 3" in by_source[11].prompt
    verdicts = score_many(tasks, [spec_of(t).reference_solution for t in tasks], executor=executor)
    assert all(v.passed for v in verdicts)


def test_mbpp_rejects_broken_rows(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(
        json.dumps({"task_id": 1, "text": "x", "code": "def f(): pass", "test_list": ["assert f(("]}) + "\n"
    )
    with pytest.raises(ValueError):
        len(MBPPTasks(str(path)))
