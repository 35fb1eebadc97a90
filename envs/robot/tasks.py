"""Generated robot-program tasks: per-index seeded drafts from `constraint_kinds.py`, disjoint train/eval splits.

Each task's hidden `ground_truth` holds the world states, one check spec per state and the mutants; the public
metadata names the kind, its constraint labels and the number of states, never the states or checks.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from rlvr_gym import Task
from rlvr_gym.family import TaskSource

from .constraint_kinds import KINDS, PROGRAM_ONLY, Draft, program

API_DOC = """You control a mobile robot through these Python functions (already defined, do not import them):
- get_current_location() -> str: the room the robot is in now.
- get_all_rooms() -> list[str]: every room of the building.
- is_in_room(thing: str) -> bool: whether the object or person is in the robot's current room.
- go_to(location: str) -> None: move to a room.
- ask(person: str, question: str, options: list[str]) -> str: ask a person in the current room; returns one option.
- say(message: str) -> None: speak a message aloud.
- pick(obj: str) -> None: pick up an object in the current room (the robot holds one object at a time).
- place(obj: str) -> None: put down the object the robot is holding.
A failed call raises an exception (the program may catch it); the robot's record of what it did ends at a print().
Only `time`, `math`, `random` and `re` may be imported; no names or attributes starting with underscores."""

FORMAT = "Write a Python function `def task_program():` that does the task, in one ```python code block."


def prompt_for(instruction: str, mode: str = "program") -> str:
    if mode == "interactive":
        from .interactive import CALL_DOC

        return f"{API_DOC.rsplit(chr(10), 1)[0]}\n\n{CALL_DOC}\n\nTask: {instruction}"
    return f"{API_DOC}\n\n{FORMAT}\n\nTask: {instruction}"


def answer_for(draft_body: list[str]) -> str:
    return f"```python\n{program(draft_body)}```"


def draft_task(draft: Draft) -> dict[str, Any]:
    """The hidden ground truth of a draft: plain data only (states, checks, mutant programs)."""
    return {
        "kind": draft.kind,
        "states": [s.to_json() for s in draft.states],
        "checks": draft.checks,
        "timeout_ok": list(draft.timeout_ok or [False] * len(draft.states)),
        "mutants": [program(m) for m in draft.mutants],
    }


class RobotTasks(TaskSource):
    """Our own RoboEval-style tasks: eight constraint kinds, 2-3 world states each, difficulty 1..5 by kind."""

    family = "robot"
    MODES = ("program", "interactive")

    def __init__(
        self,
        *,
        split: str = "train",
        seed: int = 0,
        kinds: Sequence[str] | None = None,
        size: int | None = None,
        mode: str = "program",
    ) -> None:
        super().__init__(split=split, seed=seed)
        if mode not in self.MODES:
            raise ValueError(f"mode must be one of {self.MODES}, got {mode!r}")
        self.mode = mode
        chosen = list(kinds) if kinds else [k for k in KINDS if mode == "program" or k not in PROGRAM_ONLY]
        unknown = [k for k in chosen if k not in KINDS]
        if unknown:
            raise ValueError(f"unknown robot task kinds {unknown}; choose from {sorted(KINDS)}")
        if mode == "interactive" and set(chosen) & PROGRAM_ONLY:
            raise ValueError(
                f"kinds {sorted(set(chosen) & PROGRAM_ONLY)} have states that never finish: program mode only"
            )
        self.kinds = chosen
        self.limit = size

    def __len__(self) -> int:
        if self.limit is None:
            raise TypeError("RobotTasks is an unbounded generator unless size= is given")
        return self.limit

    def _draft(self, rng: random.Random) -> Draft:
        return KINDS[rng.choice(self.kinds)](rng)

    def reference(self, draft: Draft) -> list[str]:
        """The oracle trajectory: the program as one answer, or the calls it makes on the first state."""
        if self.mode == "program":
            return [answer_for(draft.reference)]
        from .interactive import reference_calls

        return reference_calls(program(draft.reference), draft.states)

    def task(self, index: int) -> Task:
        draft = self.draw(index, self._draft, lambda d: d.instruction)
        return self.make_task(
            index,
            prompt=prompt_for(draft.instruction, self.mode),
            ground_truth=draft_task(draft),
            reference_actions=self.reference(draft),
            difficulty=draft.difficulty,
            kind=draft.kind,
            constraints=draft.labels,
            num_states=len(draft.states),
            mode=self.mode,
            **draft.meta,
        )
