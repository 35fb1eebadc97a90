"""The proposer role as a trainable env: write a valid, non-trivial program for a scene (validity reward).

Self-play's proposer reward is validity + learnability; learnability needs solver samples from the same policy, so
it lives in `selfplay.py`. This env carries the validity half, so the standard Trainer can train the proposer
role on it: reward 1 when the proposed program passes every check of `tasks.valid_task` (well-typed answer,
executes, deterministic, not guessable, varies over 8 probe scenes, robust to the named segmenter), else 0. The
verdict comes only from executing the program on ground-truth scenes.
"""

from __future__ import annotations

import json
import random
from typing import Any

from rlvr_gym import AnswerEnv, Message, Task, Verdict
from rlvr_gym.family import TaskSource

from . import dsl, verifier
from .sources import get_source
from .tasks import INSTRUCTIONS, GeoTasks, valid_task


def propose_prompt(scene_text: str, examples: list[str]) -> str:
    return (
        f"{scene_text}\n\n{INSTRUCTIONS['induction']}\nExample programs:\n" + "\n".join(examples) + "\n"
        "Propose one NEW program whose answer on this scene is unambiguous. Reply `ANSWER: <JSON program>`."
    )


class ProposeTasks(TaskSource):
    """A scene plus 3 example programs from the deduction generator; the reference is a fresh valid program."""

    family = "geo"

    def __init__(self, *, source: str = "procedural", robust_to: str | None = None, **split_and_seed: Any) -> None:
        super().__init__(**split_and_seed)
        self.generator = GeoTasks(source=source, render="text", robust_to=robust_to, **split_and_seed)
        self.robust_to = robust_to

    def task(self, index: int) -> Task:
        target = self.generator.task(index)
        truth = target.ground_truth
        scene = self.generator.scenes.scene(truth["scene_seed"])
        rng = random.Random(f"geo-propose|{self.split}|{self.seed}|{index}")
        examples = [
            json.dumps(self.generator.task(10_000 + rng.randrange(10_000)).ground_truth["program"]) for _ in range(3)
        ]
        return self.make_task(
            index,
            prompt=[Message(role="user", content=propose_prompt(scene.to_text(), examples))],
            ground_truth={
                "examples": [json.loads(e) for e in examples],
                "scene_source": truth["scene_source"],
                "scene_seed": truth["scene_seed"],
                "robust_to": self.robust_to,
            },
            reference_actions=[f"ANSWER: {json.dumps(truth['program'])}"],
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
    return _proposal_verdict(ok, "fails a validity check (runtime error, trivial, guessable or not robust)")


def _proposal_verdict(ok: bool, why_not: str) -> Verdict:
    return Verdict(reward=float(ok), passed=ok, components={"valid": float(ok)}, feedback="valid" if ok else why_not)


class GeoProposeEnv(AnswerEnv):
    family = "geo"
    verify_budget_s = 0.5
    task_source = ProposeTasks  # split, seed, source, robust_to

    def score_answer(self, task: Task, text: str) -> Verdict:
        return judge_proposal(task.ground_truth, text)

    def wrong_answers(self, task: Task, rng: random.Random) -> list[list[str]]:
        """A set (not an answer), a constant over every scene, an unknown class, and an empty-set argmax."""
        return [
            ['ANSWER: ["objects", "tree"]'],
            ['ANSWER: ["area", ["tile"]]'],
            ['ANSWER: ["count", ["objects", "dragon"]]'],
            ['ANSWER: ["area", ["largest", ["filter", ["objects", "building"], ["area_gt", 99999]]]]'],
        ]
