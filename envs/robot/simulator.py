"""Plain-data robot simulator: world state, the eight robot API calls, and a trace of every call.

The trace is the evidence temporal checks judge. A verifier must produce it with this trusted simulator
(replaying a candidate's call sequence), never accept one built in the candidate's process.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any


class RobotError(Exception):
    """A robot-level failure (unknown room, hands full, nothing to place): the program misused the API."""


@dataclass(frozen=True)
class Call:
    """One API call: name, arguments, the robot's location when it was made, and what it returned."""

    name: str
    args: tuple[Any, ...]
    location: str
    result: Any = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "args": list(self.args),
            "location": self.location,
            "result": self.result,
            "error": self.error,
        }


@dataclass
class WorldState:
    """Rooms, the objects in each room, people per room with their queued answers, and the start room."""

    rooms: list[str]
    start: str
    objects: dict[str, list[str]] = field(default_factory=dict)
    people: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # room -> person -> answers in order


class Robot:
    """The robot API over a copy of a WorldState; every call is appended to `trace`."""

    def __init__(self, state: WorldState) -> None:
        self.rooms = list(state.rooms)
        self.location = state.start
        self.objects = {room: list(items) for room, items in state.objects.items()}
        self.answers = {room: {p: list(a) for p, a in people.items()} for room, people in state.people.items()}
        self.holding: str | None = None
        self.trace: list[Call] = []

    def _record(self, name: str, args: tuple[Any, ...], fn) -> Any:
        where = self.location
        try:
            result = fn()
        except RobotError as exc:
            self.trace.append(Call(name, args, where, None, str(exc)))
            raise
        self.trace.append(Call(name, args, where, result))
        return result

    def _resolve_room(self, pattern: str) -> str:
        """Regex match of a room name (first match wins, exact name preferred); unknown rooms are errors."""
        if pattern in self.rooms:
            return pattern
        for room in self.rooms:
            if re.search(re.escape(pattern), room, re.IGNORECASE):
                return room
        raise RobotError(f"unknown room: {pattern!r}")

    def get_current_location(self) -> str:
        return self._record("get_current_location", (), lambda: self.location)

    def get_all_rooms(self) -> list[str]:
        return self._record("get_all_rooms", (), lambda: list(self.rooms))

    def is_in_room(self, name: str) -> bool:
        def look() -> bool:
            here = self.objects.get(self.location, []) + list(self.answers.get(self.location, {}))
            return any(re.search(re.escape(name), thing, re.IGNORECASE) for thing in here)

        return self._record("is_in_room", (name,), look)

    def go_to(self, room: str) -> None:
        """Move; the trace records the resolved destination as the call's result (the program gets None)."""

        def move() -> str:
            self.location = self._resolve_room(room)
            return self.location

        self._record("go_to", (room,), move)

    def ask(self, person: str, question: str, options: list[str]) -> str:
        def answer() -> str:
            people = self.answers.get(self.location, {})
            if person not in people:
                raise RobotError(f"{person!r} is not in {self.location!r}")
            queue = people[person]
            reply = queue.pop(0) if queue else options[0]
            return reply if reply in options else options[0]

        return self._record("ask", (person, question, tuple(options)), answer)

    def say(self, message: str) -> None:
        return self._record("say", (message,), lambda: None)

    def pick(self, obj: str) -> None:
        def take() -> None:
            if self.holding is not None:
                raise RobotError(f"already holding {self.holding!r}")
            here = self.objects.get(self.location, [])
            if obj not in here:
                raise RobotError(f"no {obj!r} in {self.location!r}")
            here.remove(obj)
            self.holding = obj

        return self._record("pick", (obj,), take)

    def place(self, obj: str) -> None:
        def put() -> None:
            if self.holding != obj:
                raise RobotError(f"not holding {obj!r}")
            self.objects.setdefault(self.location, []).append(obj)
            self.holding = None

        return self._record("place", (obj,), put)
