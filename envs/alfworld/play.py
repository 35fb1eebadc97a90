"""Playing replies on one ALFWorld game: the single code path shared by the live env and the offline verifier.

A reply is parsed (`actions.parse_action`), mapped to an admissible command, and only then sent to the engine;
anything else is a no-op answered with "Nothing happens" feedback. `won` always comes from the engine. Callers
hold `engine.engine_lock()` around engine calls (the env per step, the verifier for a whole replay).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .actions import ParsedAction, canonical_command, invalid_feedback, parse_action
from .belief_tracker import GroundTruthTracker


@dataclass(frozen=True)
class Move:
    """One reply played: what it parsed to, the command the engine ran (None: not playable), the engine's answer."""

    parsed: ParsedAction
    command: str | None
    feedback: str
    won: bool


class Game:
    """One game loaded on an engine, with the observation-only ground-truth tracker beside it."""

    def __init__(self, engine_env: Any) -> None:
        self.engine_env = engine_env
        self.state: Any = None
        self.tracker = GroundTruthTracker()
        self.invalid = 0

    def start(self) -> str:
        """Reset the loaded game; returns the opening observation."""
        self.state = self.engine_env.reset()
        self.tracker = GroundTruthTracker()
        self.tracker.observe(self.state.feedback)
        self.invalid = 0
        return self.state.feedback

    def admissible(self) -> list[str]:
        return [c for c in self.state["admissible_commands"] if c != "help"]

    def play(self, reply: str) -> Move:
        admissible = self.admissible()
        parsed = parse_action(reply)
        command = canonical_command(parsed.command, admissible) if parsed.error is None else None
        if command is None:
            self.invalid += 1
            return Move(parsed, None, invalid_feedback(parsed, admissible), False)
        self.state, _, _ = self.engine_env.step(command)
        self.tracker.observe(self.state.feedback)
        return Move(parsed, command, self.state.feedback, bool(self.state["won"]))
