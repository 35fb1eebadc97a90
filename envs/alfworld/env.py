"""ALFWorld as a multi-turn rlvr-gym env on the real TextWorld/alfworld engine.

Each turn the agent sees the game's text observation and the admissible commands and answers with one command
(plain text, `<action>...</action>`, `Action: ...`, or the full belief format of `belief`). Replies are played by
`play.Game`, the same code the verifier replays trajectories with; the episode ends with reward 1 on the engine's
`won`, or at the turn limit. Step infos carry what ReBel's and GiGPO's estimators need: the raw observation before
and after the step, the admissible commands after it, and the ground-truth belief snapshot from observations.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any, ClassVar

from rlvr_gym.env import Env, StepResult, feedback
from rlvr_gym.integrations.episode import ActionTool, text_tool
from rlvr_gym.types import Message, Task, Verdict

from . import verifier
from .actions import parse_action
from .belief import Belief, initial_belief, merge_belief, parse_belief, parse_output
from .play import Game
from .tasks import ALFWorldOfficialTasks, ALFWorldTasks

PLAIN_INSTRUCTIONS = (
    "You are an agent in a household (ALFWorld). Each turn you see an observation and the admissible actions. "
    "Think briefly inside <think>...</think>, then reply with exactly one admissible action inside "
    "<action>...</action>."
)
REBEL_INSTRUCTIONS = (
    "You are an agent in a household (ALFWorld). Each turn, reply in this exact order:\n"
    '<belief>{"state": {"objects": {obj: location|"in_hand"|"unknown"}, "states": {obj: '
    '"heated"|"cooled"|"cleaned"|"sliced"|"none"}, "visited": [receptacle], "unvisited_candidates": '
    '[receptacle]}, "task": {"phase": "find|navigate|pickup|transform|place|done", "target": object, '
    '"subgoal": sentence}, "prediction": "If I execute [action], I expect [next observation]."}</belief>\n'
    "<think>2-3 sentences</think>\n<action>exactly one admissible action</action>\n"
    "Your previous cumulative belief is shown inside <belief_prev>...</belief_prev>."
)
PROMPT_STYLES = ("plain", "rebel")


def _task_line(opening: str, task: Task | None) -> str:
    """The opening's "Your task is to: ..." line (repeated every ReBel turn: the opening itself is not replayed)."""
    for line in opening.splitlines():
        if line.strip().lower().startswith("your task is to"):
            return line.strip()
    desc = task.metadata.get("task_desc") if task else None
    return f"Your task is to: {desc}." if desc else ""


class ALFWorldEnv(Env):
    """Generated ALFWorld games (`rlvr/ALFWorld-v0`). Source options: see `tasks.ALFWorldTasks`."""

    family = "alfworld"
    max_turns = 50
    step_timeout_s = 60.0
    episode_timeout_s = 1800.0
    verify_budget_s: ClassVar[float] = 10.0  # a replay resets the engine and plays up to 40 planner steps
    check_exceptions: ClassVar[dict[str, str]] = {}
    trainer_tools: ClassVar[tuple[ActionTool, ...]] = (
        text_tool(
            "act", "Take one action in the household, for example 'go to desk 1'.", "action", "One action command."
        ),
    )

    task_source = ALFWorldTasks  # split, seed and the generator options (task types, scenes, size, ...)

    def __init__(self, *, prompt_style: str = "plain", history: int = 2, **kwargs: Any) -> None:
        if prompt_style not in PROMPT_STYLES:
            raise ValueError(f"prompt_style must be one of {PROMPT_STYLES}")
        super().__init__(**kwargs)
        self.prompt_style = prompt_style
        self.history = history
        self._engine: Any = None
        self._engine_path: str | None = None
        self.game: Game | None = None
        self._belief: Belief | None = None
        self._recent: list[str] = []
        self._task_line = ""

    # ---- verifier ----------------------------------------------------------------------------------------------
    def verify(self, task: Task | dict[str, Any], actions: Sequence[str]) -> Verdict:
        return verifier.verify(self.coerce_task(task), actions, max_turns=self.max_turns)

    def wrong_answers(self, task: Task, rng: random.Random) -> list[list[str]]:
        return verifier.wrong_answers(task, rng)

    # ---- episode -----------------------------------------------------------------------------------------------
    def start(self, task: Task) -> list[Message]:
        from . import engine

        path = verifier.game_file(task)
        with engine.engine_lock():
            if self._engine is None or self._engine_path != path:
                self._engine = engine.load_game(self._engine, path)
                self._engine_path = path
            self.game = Game(self._engine)
            opening = self.game.start()
        self._recent = []
        self._belief = None
        self._task_line = _task_line(opening, task)
        if self.prompt_style == "rebel":
            self._belief = initial_belief({}, self.game.tracker.snapshot()["receptacles"])
            return [Message(role="user", content=self._render(opening))]
        return [Message(role="user", content=f"{PLAIN_INSTRUCTIONS}\n\n{self._render(opening)}")]

    def _render(self, observation: str) -> str:
        """One turn's prompt. ReBel style (§1.1) is self-contained, so an agent that shows only the latest message
        (`rollout.context: current`) still sees everything the method gives it: the instructions, the task, the
        cumulative belief, the last `history` actions, the observation and the admissible actions; earlier turns
        are never replayed, so the prompt's length is bounded by construction."""
        assert self.game is not None
        parts = []
        if self._belief is not None:
            parts.append(REBEL_INSTRUCTIONS)
            if self._task_line not in observation:
                parts.append(self._task_line)
            parts.append(f"<belief_prev>{json.dumps(self._belief.to_json())}</belief_prev>")
            if self._recent:
                parts.append("Recent actions: " + "; ".join(self._recent[-self.history :]))
        parts.append(f"Observation: {observation.strip()}")
        parts.append("Admissible actions: " + ", ".join(self.game.admissible()))
        return "\n\n".join(parts)

    # ---- SFT cold start (docs/alfworld.md) ---------------------------------------------------------------------
    def expert_replies(self, task: Task) -> list[str]:
        """The replies an expert sends for `task`'s reference plan in this prompt style: the plain commands, or in
        ReBel style each command tagged with belief and think text by `expert.expert_replies`. Used by
        `rlvr-gym export-sft`; resets the env's game."""
        actions = list(task.reference_actions or [])
        if self.prompt_style != "rebel":
            return actions
        from . import engine
        from .expert import expert_replies

        self.reset(options={"task": task})
        assert self.game is not None
        with engine.engine_lock():
            return expert_replies(self.game, actions, str(task.metadata.get("task_desc", "")))

    def reply_well_formed(self, text: str) -> bool:
        """Whether a reply follows this prompt style's format (ReBel: belief JSON, think and action tags; plain:
        one readable action). `rlvr-gym sft` reports the share of such replies on held-out prompts."""
        if self.prompt_style == "rebel":
            return parse_output(text).format_ok
        return parse_action(text).error is None

    def minimal_reply(self) -> str | None:
        """The shortest well-formed reply of this prompt style (None: any text is a reply); a sampling budget
        shorter than it can never produce one (the train config refuses it at load)."""
        from .expert import MINIMAL_REPLY

        return MINIMAL_REPLY if self.prompt_style == "rebel" else None

    def respond(self, action: str) -> StepResult:
        from . import engine

        assert self.game is not None
        anchor = self.game.state.feedback
        info: dict[str, Any] = {
            "anchor_obs": anchor,
            "task_type": self.task.metadata.get("task_type") if self.task else None,
        }
        if self.turn == 1:
            info["belief_initial"] = {"objects": {}, "receptacles": self.game.tracker.snapshot()["receptacles"]}
        if self._belief is not None:
            self._belief = merge_belief(self._belief, parse_belief(action))
        with engine.engine_lock():
            move = self.game.play(action)
        if move.command is not None:
            self._recent.append(move.command)
        info.update(
            command=move.command or move.parsed.command[:200],
            observation_text=move.feedback,
            admissible_commands=self.game.admissible(),
            won=move.won,
            belief_gt=self.game.tracker.snapshot(),
            invalid_actions=self.game.invalid,
        )
        verdict = verifier.outcome_verdict(True, self.turn, self.game.invalid) if move.won else None
        return StepResult(
            observation=feedback(self._render(move.feedback)),
            reward=1.0 if move.won else 0.0,
            terminated=move.won,
            valid_action=move.command is not None,
            verdict=verdict,
            info=info,
        )

    def truncation_verdict(self) -> Verdict:
        return verifier.outcome_verdict(False, self.turn, self.game.invalid if self.game else 0)

    def close(self) -> None:
        if self._engine is not None:
            self._engine.close()
            self._engine = None
            self._engine_path = None


class ALFWorldOfficialEnv(ALFWorldEnv):
    """The official ALFWorld games from `ALFWORLD_DATA` (`rlvr/ALFWorldOfficial-v0`).

    `split`: `train` or `eval`; `eval_set`: `valid_seen` (default) or `valid_unseen`. The older split names
    `seen`/`unseen`/`valid_seen`/`valid_unseen` still work and mean `eval` on that set.
    """

    task_source = ALFWorldOfficialTasks  # split, eval_set, seed, task_types
