"""GeoX env: answer a spatial program over an aerial-like scene (single-turn deduction)."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any, ClassVar

from rlvr_gym import AnswerEnv, Env, Message, StepResult, Task, Verdict
from rlvr_gym.env import feedback
from rlvr_gym.integrations.episode import ActionTool, text_tool

from . import verifier
from .perception import SEGMENTERS
from .sources import get_source
from .tasks import GeoTasks

_SAME_TEXT_HIDDEN_SCENE = (
    "the prompt shows no scene (only the tool does), so tasks asking one program of different scenes share their "
    "text; splits are assigned by (mode, scene, program)"
)
_TOOL_CALL = re.compile(r"segment\(\s*([a-z]{1,16})\s*\)")
# every GeoX env (the proposer's too) takes one reply in the format its task states
TRAINER_TOOLS: tuple[ActionTool, ...] = (
    text_tool(
        "answer",
        "Send your reply in the format the task asks for; it is checked exactly as written.",
        "text",
        "Your reply text.",
    ),
)


class GeoEnv(AnswerEnv):
    """Single-turn GeoX: by default the prompt is the image and the question (`render="image"`), so the answer
    needs perception; `render="text"` (the object list) is the explicit ablation for text-only models."""

    family = "geo"
    verify_budget_s = 0.2
    trainer_tools: ClassVar[tuple[ActionTool, ...]] = TRAINER_TOOLS
    task_source = GeoTasks  # split, seed, source, render, mode

    def __init__(self, **kwargs: Any) -> None:
        if kwargs.get("render") == "none":
            raise ValueError("render='none' shows nothing of the scene: it is the tools env's view (GeoX-Tools)")
        super().__init__(**kwargs)

    def score_answer(self, task: Task, text: str) -> Verdict:
        return verifier.verify(task, [text])

    def wrong_answers(self, task: Task, rng: random.Random) -> list[list[str]]:
        return verifier.wrong_answers(task, rng)


class GeoToolsEnv(Env):
    """Multi-turn GeoX: the agent may call `segment(<class>)` (a perception tool) before its `ANSWER:` line.

    The prompt shows no scene (`render="none"`): the tool's detections are the only way to learn what is in it, and
    the reference solution (the oracle) calls the tool for every class its program reads before answering. The
    verdict is the same pure verifier as the single-turn env: tool calls change what the agent knows, not how
    it is judged. Tasks pass the "robust to perception" check for this env's segmenter: the answer computed from
    its detections equals the ground-truth answer, so a perfect tool user can always score.
    """

    family = "geo"
    verify_budget_s = 0.5
    trainer_tools: ClassVar[tuple[ActionTool, ...]] = TRAINER_TOOLS

    task_source = GeoTasks  # split, seed, source, render, mode; robust_to is this env's segmenter

    def __init__(self, *, segmenter: str = "colorseg", max_turns: int = 6, render: str = "none", **kwargs: Any) -> None:
        if kwargs.get("mode", "deduction") != "deduction":
            raise ValueError("GeoX-Tools asks deduction questions (its tool sees only the task's one scene)")
        self.segmenter = SEGMENTERS[segmenter]()
        super().__init__(max_turns=max_turns, robust_to=segmenter, render=render, tools=True, **kwargs)
        if render != "text":
            self.check_exceptions = {"splits": _SAME_TEXT_HIDDEN_SCENE}  # type: ignore[misc]

    def start(self, task: Task) -> list[Message]:
        hint = Message(role="user", content=f"Tool: reply `segment(<class>)` to get {self.segmenter.name} detections.")
        return [*task.prompt_messages(), hint]

    def respond(self, action: str) -> StepResult:
        assert self.task is not None
        call = _TOOL_CALL.fullmatch(action.strip()[:64]) if len(action) < 256 else None
        if call is not None:
            scene = get_source(self.task.ground_truth["scene_source"]).scene(self.task.ground_truth["scene_seed"])
            found = [asdict(d) for d in self.segmenter.segment(scene, call.group(1))]
            return StepResult(observation=feedback(json.dumps(found)))
        verdict = verifier.verify(self.task, [action])
        return StepResult(reward=verdict.reward, terminated=True, valid_action=verdict.valid, verdict=verdict)

    def verify(self, task: Task | dict[str, Any], actions: Sequence[str]) -> Verdict:
        answers = [a for a in actions if _TOOL_CALL.fullmatch(a.strip()[:64]) is None or len(a) >= 256]
        return verifier.verify(self.coerce_task(task), answers[:1] or [""])

    def wrong_answers(self, task: Task, rng: random.Random) -> list[list[str]]:
        return verifier.wrong_answers(task, rng)
