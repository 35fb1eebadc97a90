"""ALFWorld as a multi-turn rlvr-gym env on the real TextWorld/alfworld engine.

Each turn the agent sees the game's text observation and the admissible commands and answers with one command
(plain text, `<action>...</action>`, or the full ReBel format). Commands must match an admissible one exactly
(after lower-casing and the `put X in/on Y` → `move X to Y` alias); anything else is an invalid step with a
did-you-mean hint. The episode ends with reward 1 on `won`, or at the step limit. Step infos carry what ReBel's
and GiGPO's estimators need: the raw observation before and after the step, the admissible commands after it,
and the ground-truth belief snapshot from observations.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rlvr_gym.env import Env, StepResult, feedback
from rlvr_gym.types import EnvUnavailable, Message, Task, Verdict

from .actions import canonical_command, extract_command, invalid_feedback
from .belief_tracker import GroundTruthTracker
from .generator import GameGenerator, GameRecord, GeneratorConfig
from .scenes import TASK_TYPES

PLAIN_INSTRUCTIONS = (
    "You are an agent in a household (ALFWorld). Each turn you see an observation and the admissible actions. "
    "Think briefly inside <think>...</think>, then reply with exactly one admissible action inside "
    "<action>...</action>."
)
REBEL_INSTRUCTIONS = (
    "You are an agent in a household (ALFWorld). Each turn, reply in this exact order:\n"
    "<belief>{\"state\": {\"objects\": {obj: location|\"in_hand\"|\"unknown\"}, \"states\": {obj: "
    "\"heated\"|\"cooled\"|\"cleaned\"|\"sliced\"|\"none\"}, \"visited\": [receptacle], \"unvisited_candidates\": "
    "[receptacle]}, \"task\": {\"phase\": \"find|navigate|pickup|transform|place|done\", \"target\": object, "
    "\"subgoal\": sentence}, \"prediction\": \"If I execute [action], I expect [next observation].\"}</belief>\n"
    "<think>2-3 sentences</think>\n<action>exactly one admissible action</action>\n"
    "Your previous cumulative belief is shown inside <belief_prev>...</belief_prev>."
)


class ALFWorldEnv(Env):
    """Generated ALFWorld games (`rlvr/ALFWorld-v0`): kwargs `task_types`, `split` (seen/unseen), `seed`, `size`."""

    family = "alfworld"
    max_turns = 50
    step_timeout_s = 60.0
    episode_timeout_s = 1800.0

    def __init__(
        self,
        *,
        task_types: list[str] | tuple[str, ...] = TASK_TYPES,
        split: str = "seen",
        seed: int = 0,
        size: int = 1200,
        max_distractor_types: int = 8,
        max_instances: int = 3,
        max_receptacles: int | None = None,
        prompt_style: str = "plain",
        history: int = 2,
        cache_dir: str | None = None,
        max_turns: int | None = 50,
        **kwargs: Any,
    ) -> None:
        super().__init__(max_turns=max_turns, **kwargs)
        if prompt_style not in ("plain", "rebel"):
            raise ValueError("prompt_style must be 'plain' or 'rebel'")
        self.prompt_style = prompt_style
        self.history = history
        self.size = size
        self._config = GeneratorConfig(task_types=tuple(task_types), split=split, seed=seed,
                                       max_distractor_types=max_distractor_types, max_instances=max_instances,
                                       max_receptacles=max_receptacles)
        self.generator = GameGenerator(self._config, cache_dir)
        self._game: Any = None
        self._game_path: str | None = None
        self._state: Any = None
        self._tracker = GroundTruthTracker()
        self._invalid = 0
        self._belief: Any = None
        self._recent: list[str] = []

    # ---- task source -------------------------------------------------------------------------------------------
    @property
    def num_tasks(self) -> int | None:
        return self.size

    def record(self, index: int) -> GameRecord:
        return self.generator.game(index)

    def get_task(self, index: int) -> Task:
        return task_from_record(self.record(index), source=f"generated:{self._config.split}:{self._config.seed}")

    # ---- engine ------------------------------------------------------------------------------------------------
    def _gamefile(self, task: Task) -> str:
        path = task.metadata.get("gamefile")
        if path and Path(path).exists():
            return str(path)
        return self.record(int(task.metadata["index"])).path  # e.g. a task re-scored on another machine

    def _load(self, path: str) -> None:
        from . import engine

        if self._game is None or self._game_path != path:
            self._game = engine.load_game(self._game, path)
            self._game_path = path

    # ---- episode -----------------------------------------------------------------------------------------------
    def start(self, task: Task) -> list[Message]:
        from . import engine

        with engine.engine_lock():
            self._load(self._gamefile(task))
            self._state = self._game.reset()
        self._tracker = GroundTruthTracker()
        self._tracker.observe(self._state.feedback)
        self._invalid = 0
        self._recent = []
        self._belief = None
        if self.prompt_style == "rebel":
            from rlvr_gym.algorithms.rebel.belief import initial_belief

            gt = self._tracker.snapshot()
            self._belief = initial_belief({}, gt["receptacles"])
        intro = PLAIN_INSTRUCTIONS if self.prompt_style == "plain" else REBEL_INSTRUCTIONS
        return [Message(role="user", content=f"{intro}\n\n{self._render(self._state.feedback)}")]

    def _admissible(self) -> list[str]:
        return [c for c in self._state["admissible_commands"] if c not in ("help",)]

    def _render(self, observation: str) -> str:
        parts = []
        if self.prompt_style == "rebel" and self._belief is not None:
            parts.append(f"<belief_prev>{json.dumps(self._belief.to_json())}</belief_prev>")
            if self._recent:
                parts.append("Recent actions: " + "; ".join(self._recent[-self.history:]))
        parts.append(f"Observation: {observation.strip()}")
        parts.append("Admissible actions: " + ", ".join(self._admissible()))
        return "\n\n".join(parts)

    def _update_belief(self, action: str) -> None:
        if self.prompt_style != "rebel":
            return
        from rlvr_gym.algorithms.rebel.belief import merge_belief, parse_belief

        self._belief = merge_belief(self._belief, parse_belief(action))

    def respond(self, action: str) -> StepResult:
        anchor = self._state.feedback
        admissible = self._admissible()
        command = extract_command(action)
        canon = canonical_command(command, admissible)
        self._update_belief(action)
        info: dict[str, Any] = {"anchor_obs": anchor, "command": canon or command, "task_type":
                                self.task.metadata.get("task_type") if self.task else None}
        if self.turn == 1:
            info["belief_initial"] = {"objects": {}, "receptacles": self._tracker.snapshot()["receptacles"]}
        if canon is None:
            self._invalid += 1
            text = invalid_feedback(command, admissible)
            won = False
        else:
            from . import engine

            with engine.engine_lock():
                self._state, _, _ = self._game.step(canon)
            self._recent.append(canon)
            text = self._state.feedback
            self._tracker.observe(text)
            won = bool(self._state["won"])
        info.update(observation_text=text, admissible_commands=self._admissible(), won=won,
                    belief_gt=self._tracker.snapshot(), invalid_actions=self._invalid)
        verdict = self._verdict(won) if won else None
        return StepResult(observation=feedback(self._render(text)), reward=1.0 if won else 0.0, terminated=won,
                          valid_action=canon is not None, verdict=verdict, info=info)

    def _verdict(self, won: bool) -> Verdict:
        components = {"won": float(won), "steps": float(self.turn), "invalid_actions": float(self._invalid)}
        note = "task completed" if won else f"turn limit of {self.max_turns} reached"
        return Verdict(reward=float(won), passed=won, components=components, feedback=note)

    def truncation_verdict(self) -> Verdict:
        return self._verdict(False)

    def close(self) -> None:
        if self._game is not None:
            self._game.close()
            self._game = None
            self._game_path = None


def task_from_record(record: GameRecord, *, source: str) -> Task:
    """A Task whose reference actions are the planner walkthrough (one command per turn)."""
    meta = {"index": record.index, "task_type": record.task_type, "scene": record.scene, "gamefile": record.path,
            "task_desc": record.task_desc, "params": record.params, "source": source,
            "difficulty": len(record.walkthrough), **record.extra}
    return Task(id=f"alfworld-{source.replace(':', '-')}-{record.index}", prompt=f"Your task is to: {record.task_desc}.",
                ground_truth={"task_type": record.task_type, "walkthrough": record.walkthrough},
                reference_actions=list(record.walkthrough), metadata=meta)


class ALFWorldOfficialEnv(ALFWorldEnv):
    """The official ALFWorld games from `ALFWORLD_DATA` (`rlvr/ALFWorldOfficial-v0`; split train/seen/unseen)."""

    def __init__(self, *, split: str = "seen", task_types: list[str] | tuple[str, ...] = TASK_TYPES,
                 **kwargs: Any) -> None:
        kwargs.pop("size", None)
        super().__init__(task_types=task_types, split="seen", **kwargs)
        from .official import SPLITS

        if split not in SPLITS:
            raise ValueError(f"split must be one of {sorted(SPLITS)}")
        self.official_split = split
        self._task_types = tuple(task_types)
        from .official import data_root, official_games

        self._game_files = official_games(self.official_split, self._task_types)
        if not self._game_files:
            raise EnvUnavailable(
                f"no official ALFWorld games under ALFWORLD_DATA={data_root()} (set ALFWORLD_DATA after alfworld-download)"
            )

    def _games(self):
        return self._game_files

    @property
    def num_tasks(self) -> int | None:
        return len(self._games())

    def record(self, index: int) -> GameRecord:
        from .official import official_record

        return official_record(self._games()[index], index)

    def get_task(self, index: int) -> Task:
        return task_from_record(self.record(index), source=f"official:{self.official_split}")
