"""The proposer role as a trainable env: write a valid, non-trivial program for a scene that meets a per-task target.

Self-play's proposer reward is validity + learnability; learnability needs solver samples from the same policy, so
it lives in `selfplay.py`. Validity alone is kept by one fixed program (`["count", ["objects", "tree"]]` was valid
on 95% of scenes, issue #42), so each standalone task also names a target drawn from a fresh valid program for the
scene: its top-level operation, the object classes it is about (exactly those) and one inner operation it uses,
the two operations drawn uniformly from the pairs the program grammar can reach (`achievable_targets`).
Reward 1 when the proposed program meets the target and passes every check of `tasks.valid_task` (well-typed
answer, executes, deterministic, not guessable, varies over 8 probe scenes, robust to the named segmenter), else
0. A fixed program meets a target rarely (a bare `["count", ["objects", C]]` never: every target names an inner
operation); meeting targets means writing a new program per task. The verdict comes only from executing the
program on ground-truth scenes.
"""

from __future__ import annotations

import json
import random
from functools import lru_cache
from typing import Any, ClassVar

from rlvr_gym import AnswerEnv, Message, Task, Verdict
from rlvr_gym.family import TaskSource
from rlvr_gym.integrations.episode import ActionTool

from . import dsl, verifier
from .env import TRAINER_TOOLS
from .sources import get_source
from .tasks import INSTRUCTIONS, GeoTasks, random_program, valid_task

FIXED_PROGRAMS = {  # what a collapsed proposer sends for every scene (issue #42)
    "count_trees": ["count", ["objects", "tree"]],
    "count_buildings": ["count", ["objects", "building"]],
    "building_area": ["total_area", ["objects", "building"]],
    "largest_building_area": ["area", ["largest", ["objects", "building"]]],
}


TARGET_DRAWS = 3000  # grammar draws tried for one target before another target is drawn


def operators(program: Any) -> list[str]:
    """Operation names of a program, outermost first (`["count", ["objects", "tree"]]` -> count, objects)."""
    if not isinstance(program, list) or not program or not isinstance(program[0], str):
        return []
    return [program[0], *(op for arg in program[1:] for op in operators(arg))]


def classes_of(program: Any) -> set[str]:
    """The object classes a program selects (`["objects", C]`)."""
    if not isinstance(program, list) or not program:
        return set()
    if program[0] == "objects" and len(program) == 2 and isinstance(program[1], str):
        return {program[1]}
    return set().union(*(classes_of(arg) for arg in program[1:]))


@lru_cache(maxsize=8)
def achievable_targets(classes: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """Every (top operation, inner operation) pair the program grammar produces, found by seeded sampling.

    Targets draw this pair uniformly (the classes then come from the program found for it), so no target, and so
    no fixed program, covers a large share of tasks: taking the whole target from a sampled program instead made
    `length` of roads `within` a quadrant 10% of all tasks."""
    rng = random.Random("geo-propose-targets")
    found = set()
    for _ in range(20_000):
        program = random_program(rng, classes)
        found.update((program[0], op) for op in set(operators(program)) - {program[0], "objects"})
    return tuple(sorted(found))


def target_problem(target: dict[str, Any], program: Any) -> str | None:
    """Why a program misses its target, or None."""
    if program[0] != target["top"]:
        return f"the top-level operation is {program[0]!r}, the target asks for {target['top']!r}"
    if sorted(classes_of(program)) != target["classes"]:
        return f"the program is about {sorted(classes_of(program))}, the target about {target['classes']}"
    if target["uses"] not in operators(program)[1:]:
        return f"the program does not use {target['uses']!r}"
    return None


def describe_target(target: dict[str, Any]) -> str:
    about = ", ".join(target["classes"]) or "no object class"
    return f"`{target['top']}` at the top, about {about} only, using `{target['uses']}` inside"


def propose_prompt(scene_text: str, examples: list[str], target: dict[str, Any] | None = None) -> str:
    aim = f" Target: {describe_target(target)}." if target else ""
    return (
        f"{scene_text}\n\n{INSTRUCTIONS['induction']}\nExample programs:\n" + "\n".join(examples) + "\n"
        f"Propose one NEW program whose answer on this scene is unambiguous.{aim} Reply `ANSWER: <JSON program>`."
    )


class ProposeTasks(TaskSource):
    """A scene plus 3 example programs from the deduction generator; the reference is a fresh valid program."""

    family = "geo"

    def __init__(self, *, source: str = "procedural", robust_to: str | None = None, **split_and_seed: Any) -> None:
        super().__init__(**split_and_seed)
        self.generator = GeoTasks(source=source, render="text", robust_to=robust_to, **split_and_seed)
        self.robust_to = robust_to

    def _make(self, rng: random.Random) -> dict[str, Any]:
        """A (top, inner) operation pair drawn uniformly from the achievable ones, a valid program for a scene that
        has them, and the target they make with the program's classes."""
        scenes = self.generator.scenes
        targets = achievable_targets(tuple(scenes.classes))
        for _ in range(20):
            top, uses = rng.choice(targets)
            for _ in range(TARGET_DRAWS):
                program = random_program(rng, scenes.classes)
                if program[0] != top or uses not in operators(program)[1:]:
                    continue
                scene_seed = rng.randrange(2**31)
                if valid_task(program, scenes.scene(scene_seed), scenes, self.robust_to) is not None:
                    target = {"top": top, "classes": sorted(classes_of(program)), "uses": uses}
                    return {"scene_seed": scene_seed, "program": program, "target": target}
        raise RuntimeError("geo propose: no valid program for 20 drawn targets")

    def task(self, index: int) -> Task:
        item = self.draw(index, self._make, lambda it: f"propose|{it['scene_seed']}|{json.dumps(it['program'])}")
        rng = random.Random(f"geo-propose|{self.split}|{self.seed}|{index}")
        scene = self.generator.scenes.scene(item["scene_seed"])
        examples = [
            json.dumps(self.generator.task(10_000 + rng.randrange(10_000)).ground_truth["program"]) for _ in range(3)
        ]
        return self.make_task(
            index,
            prompt=[Message(role="user", content=propose_prompt(scene.to_text(), examples, item["target"]))],
            ground_truth={
                "examples": [json.loads(e) for e in examples],
                "scene_source": self.generator.scenes.name,
                "scene_seed": item["scene_seed"],
                "robust_to": self.robust_to,
                "target": item["target"],
            },
            reference_actions=[f"ANSWER: {json.dumps(item['program'])}"],
            difficulty=1,
            role="proposer",
        )


def judge_proposal(truth: dict[str, Any], text: str) -> Verdict:
    answer = verifier.extract(text)
    if answer is None:
        return Verdict.invalid("expected exactly one line `ANSWER: <JSON program>`")
    try:
        program = dsl.parse(answer)
        dsl.typecheck(program)
    except dsl.ProgramError as exc:
        return Verdict.invalid(str(exc))
    if program in truth.get("examples", []):
        return _proposal_verdict(False, "a copy of an example program")
    source = get_source(truth["scene_source"])
    ok = valid_task(program, source.scene(truth["scene_seed"]), source, truth["robust_to"]) is not None
    if not ok:
        return _proposal_verdict(False, "fails a validity check (runtime error, trivial, guessable or not robust)")
    missed = target_problem(truth["target"], program) if "target" in truth else None
    return _proposal_verdict(True, missed or "", on_target=missed is None)


def _proposal_verdict(valid: bool, why_not: str, *, on_target: bool = False) -> Verdict:
    ok = valid and on_target
    feedback = "valid and on target" if ok else why_not if not valid else f"valid, but misses the target: {why_not}"
    return Verdict(
        reward=float(ok), passed=ok, components={"valid": float(valid), "on_target": float(ok)}, feedback=feedback
    )


class GeoProposeEnv(AnswerEnv):
    family = "geo"
    verify_budget_s = 0.5
    trainer_tools: ClassVar[tuple[ActionTool, ...]] = TRAINER_TOOLS
    task_source = ProposeTasks  # split, seed, source, robust_to

    def score_answer(self, task: Task, text: str) -> Verdict:
        return judge_proposal(task.ground_truth, text)

    def floor_policies(self, task: Task, rng: random.Random) -> dict[str, list[str]]:
        """One fixed program for every scene, and a copy of the first example: check-env's reward floor."""
        policies = {name: [f"ANSWER: {json.dumps(program)}"] for name, program in FIXED_PROGRAMS.items()}
        policies["copy_example"] = [f"ANSWER: {json.dumps(task.ground_truth['examples'][0])}"]
        return policies

    def wrong_answers(self, task: Task, rng: random.Random) -> list[list[str]]:
        """A set (not an answer), a constant over every scene, an unknown class, and an empty-set argmax."""
        return [
            ['ANSWER: ["objects", "tree"]'],
            ['ANSWER: ["area", ["tile"]]'],
            ['ANSWER: ["count", ["objects", "dragon"]]'],
            ['ANSWER: ["area", ["largest", ["filter", ["objects", "building"], ["area_gt", 99999]]]]'],
        ]
