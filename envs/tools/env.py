"""The tool envs: a few lines each on `rlvr_gym.Env`; all judging lives in `verifier.py`.

`ToolDepthEnv` is multi-turn: each action's calls run and come back as tool messages until the agent answers
(`Answer: <value>`, no call) or submits a TIER chain. `BFCLEnv` is single-turn and AST-checked.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from rlvr_gym import Env, Message, StepResult, Task, Verdict
from rlvr_gym.env import feedback
from rlvr_gym.integrations.episode import ActionTool, ToolParam, prefixed, schema_tool

from . import floor
from .tasks import BFCLTasks, DepthTasks
from .verifier import ToolEpisode, tool_messages, verify, wrong_answers

_NO_CALL_WINS = (
    "BFCL scores any response without a call as correct here (relevance detection), so empty or junk text passes "
    "by BFCL's own definition; the category is meant to be averaged with the call categories"
)
_RELEVANCE_EXCEPTIONS = {
    "irrelevance": _NO_CALL_WINS,
    "live_irrelevance": _NO_CALL_WINS,
    "live_relevance": "BFCL scores any response with at least one call as correct here, so a response holding "
    "the reference call among other candidates passes by BFCL's own definition",
}
_PAPER_FLOOR = (
    "reward_mode=paper is TIER's reward as published: well-formed, executing calls earn the process half (0.5) "
    "whatever the answer, a floor above the contract's 5% by the paper's own definition"
)
ANSWER_TOOL = ActionTool(
    "answer",
    "Give the final answer, as a tool reported it; this ends the episode.",
    (ToolParam("value", str, "The final value, exactly as the tool output gave it."),),
    prefixed("Answer: ", "value"),
)


class ToolEnv(Env):
    """Shared surface of the tool envs: the pure verifier, the wrong answers and the offered tools."""

    family = "tools"
    verify_budget_s = 0.2

    def verify(self, task: Task | dict[str, Any], actions: Sequence[str]) -> Verdict:
        return verify(self.coerce_task(task), list(actions)[: self.max_turns])

    def wrong_answers(self, task: Task, rng: random.Random) -> list[list[str]]:
        return wrong_answers(task, rng)

    def floor_policies(self, task: Task, rng: random.Random) -> dict[str, list[str]]:
        """Constant answers, blind calls, the chain without its answer: check-env's reward floor (floor.py)."""
        return floor.floor_policies(task, rng)

    @property
    def trainer_tools(self) -> tuple[ActionTool, ...]:
        """One tool per function of the source's toolset, then `answer(value)`; none (the default tool) when the
        source has no toolset (BFCL: each task brings its own functions)."""
        toolset = getattr(self.source, "toolset", None)
        if toolset is None:
            return ()
        return (*(schema_tool(s) for s in toolset.schemas(toolset.names())), ANSWER_TOOL)

    def offered(self) -> list[str]:
        assert self.task is not None
        return list(self.task.metadata.get("tool_names") or [])


class ToolDepthEnv(ToolEnv):
    """`rlvr/ToolDepth-v0`: compositional tool chains of depth 1-6, TIER components with provenance."""

    max_turns = 10

    task_source = DepthTasks  # split, seed and `tasks.DepthConfig` (depths, tools, extra_tools, size)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.episode: ToolEpisode | None = None
        if self.source.config.reward_mode == "paper":  # type: ignore[union-attr]
            self.check_exceptions = {"reward_floor": _PAPER_FLOOR}  # type: ignore[misc]

    def start(self, task: Task) -> list[Message]:
        self.episode = ToolEpisode(task, self.source.toolset)  # type: ignore[union-attr]
        return task.prompt_messages()

    def respond(self, action: str) -> StepResult:
        assert self.episode is not None
        parsed, records = self.episode.act(action)
        info = {"calls": len(parsed.calls), "parse_errors": [e.describe() for e in parsed.errors[:10]]}
        if self.episode.done:
            verdict = self.episode.verdict()
            return StepResult(
                reward=verdict.reward, terminated=True, valid_action=verdict.valid, verdict=verdict, info=info
            )
        if records:
            return StepResult(observation=tool_messages(parsed, records), valid_action=parsed.syntax_ok, info=info)
        problems = "\n".join(f"- {e.describe()}" for e in parsed.errors[:10])
        return StepResult(
            observation=feedback(f"Your tool call could not be used:\n{problems}"), valid_action=False, info=info
        )

    def truncation_verdict(self) -> Verdict:
        assert self.episode is not None
        return self.episode.verdict()


class BFCLEnv(ToolEnv):
    """`rlvr/BFCL-v0`: one BFCL single-turn category (kwarg `category`), one turn, AST-checked."""

    max_turns = 1

    task_source = BFCLTasks  # split, category, limit

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        category = self.source.category  # type: ignore[union-attr]
        if category in _RELEVANCE_EXCEPTIONS:
            why = _RELEVANCE_EXCEPTIONS[category]
            self.check_exceptions = {"hacks": why, "reward_floor": why}  # type: ignore[misc]

    def respond(self, action: str) -> StepResult:
        assert self.task is not None
        verdict = verify(self.task, [action])
        return StepResult(reward=verdict.reward, terminated=True, valid_action=verdict.valid, verdict=verdict)
