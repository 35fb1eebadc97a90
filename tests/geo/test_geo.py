"""GeoX family: scenes, DSL bounds and typing, verifier tolerances and reference answers."""

from __future__ import annotations

import json
import random
import time

import pytest

from rlvr_gym.envs.geo import dsl, verifier
from rlvr_gym.envs.geo.scene import ProceduralScenes
from rlvr_gym.envs.geo.tasks import GeoTasks


def test_scene_is_deterministic_and_renders():
    a, b = ProceduralScenes().scene(7), ProceduralScenes().scene(7)
    assert a == b and a.objects
    assert a.render_png().startswith(b"\x89PNG")
    assert a.data_url().startswith("data:image/png;base64,")


def test_count_matches_ground_truth():
    scene = ProceduralScenes().scene(3)
    value, kind = dsl.evaluate(json.dumps(["count", ["objects", "tree"]]), scene)
    assert kind == "num" and value == len(scene.of_class("tree"))


@pytest.mark.parametrize("text", ["[" * 1_000_000, "x" * 1_000_000, "[" * 30 + "]" * 30])
def test_huge_or_deep_programs_rejected_fast(text):
    start = time.perf_counter()
    with pytest.raises(dsl.ProgramError) as info:
        dsl.parse(text)
    assert info.value.kind in {"too_large", "non_json"}
    assert time.perf_counter() - start < 0.1


@pytest.mark.parametrize(
    "program,kind",
    [
        ("not json", "non_json"),
        ('{"a": 1}', "malformed"),
        ('["count", ["area", ["largest", ["objects", "tree"]]]]', "type_error"),
        ('["objects", "dragon"]', "type_error"),
    ],
)
def test_typed_rejections(program, kind):
    with pytest.raises(dsl.ProgramError) as info:
        dsl.evaluate(program, ProceduralScenes().scene(1))
    assert info.value.kind == kind


@pytest.mark.parametrize("mode,n", [("deduction", 20), ("abduction", 20), ("induction", 6)])
def test_reference_answers_pass_and_wrong_answers_fail(mode, n):
    source = GeoTasks(split="train", mode=mode)
    for index in range(n):  # induction tasks cost ~0.5 s each to draw (five valid scenes, no simpler twin)
        task = source.task(index)
        assert verifier.verify(task, task.reference_actions).reward == 1.0
        for wrong in verifier.wrong_answers(task, random.Random(index)):
            assert not verifier.verify(task, wrong).passed


def test_two_different_answers_are_invalid():
    task = GeoTasks(split="train").task(0)
    verdict = verifier.verify(task, [task.reference_actions[0] + "\nANSWER: 123456"])
    assert not verdict.valid and verdict.reward == 0.0


def test_text_render_has_no_image():
    task = GeoTasks(split="eval", render="text").task(0)
    parts = task.prompt[0].content
    assert all(part.type == "text" for part in parts)
    assert "Objects:" in "".join(part.text for part in parts)


@pytest.mark.parametrize("answer", ['ANSWER: ["count"', "ANSWER: " + "[" * 5000, 'ANSWER: ["objects", "tree"]'])
def test_induction_bad_programs_never_pass(answer):
    task = GeoTasks(split="train", mode="induction").task(2)
    assert verifier.verify(task, [answer]).reward == 0.0


def test_induction_typed_invalid_for_malformed_program():
    task = GeoTasks(split="train", mode="induction").task(2)
    verdict = verifier.verify(task, ['ANSWER: ["count", ["objects", 3]]'])
    assert not verdict.valid and "type_error" in verdict.error


def test_tasks_vary_across_probe_scenes():
    task = GeoTasks(split="train", mode="induction").task(4)
    assert len({str(v) for v in task.ground_truth["values"]}) >= 2
