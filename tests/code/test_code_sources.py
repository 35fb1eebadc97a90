"""Task sources: the procedural generator and the MBPP-style JSONL loader."""

from __future__ import annotations

import json

import pytest

from rlvr_gym.envs.code.generator import TEMPLATES, CodeGenConfig, generate_task
from rlvr_gym.envs.code.mbpp import load_mbpp
from rlvr_gym.envs.code.spec import spec_of
from rlvr_gym.envs.code.verifier import score_many


def test_generator_is_deterministic_per_index():
    config = CodeGenConfig(seed=3, difficulty=3)
    assert generate_task(config, 7) == generate_task(config, 7)
    assert generate_task(config, 7) != generate_task(config, 8)
    assert generate_task(config, 7).metadata == {**generate_task(config, 7).metadata, "index": 7, "seed": 3}


def test_generator_covers_every_template_and_references_pass(executor):
    tasks = [
        generate_task(CodeGenConfig(seed=1, difficulty=3, templates=[name]), i) for name in TEMPLATES for i in range(2)
    ]
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
        generate_task(CodeGenConfig(templates=["nope"]), 0)


def test_bundled_mbpp_sample_passes(executor):
    tasks = load_mbpp()
    assert len(tasks) == 10
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
    tasks = load_mbpp(str(path), source="mine")
    assert [t.id for t in tasks] == ["mine/11", "mine/X/1"]
    assert spec_of(tasks[0]).entry_point == "add" and spec_of(tasks[1]).test_style == "check"
    assert "assert add(1, 2) == 3" in tasks[0].prompt
    verdicts = score_many(tasks, [spec_of(t).reference_solution for t in tasks], executor=executor)
    assert all(v.passed for v in verdicts)


def test_mbpp_rejects_broken_rows(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(
        json.dumps({"task_id": 1, "text": "x", "code": "def f(): pass", "test_list": ["assert f(("]}) + "\n"
    )
    with pytest.raises(ValueError):
        load_mbpp(str(path))
