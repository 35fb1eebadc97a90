"""Plain-data robot simulator: world state, the eight robot API calls, and a trace of every call.

Matching follows the RoboEval facts in the spec: the *state's* name, label or answer is the regex and the
program's argument is the text searched (case-insensitive), so state room "printer room 1" matches
`go_to("the printer room 1")` and a person named ".*" matches anyone. People answer from a queue that keeps its
last answer forever. The robot holds at most one object.

The trace is the evidence temporal checks judge. A verifier must produce it with this trusted simulator
(replaying a candidate's call sequence), never accept one built in the candidate's process. This module is also
shipped as source text into the sandbox (stdlib only), so the candidate's program sees the same robot.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

MAX_TEXT = 10_000  # longest string argument the robot accepts (longer ones are robot errors)


class RobotError(Exception):
    """A robot-level failure (unknown room, hands full, nothing to place, wrong argument type).

    A program may catch it and go on, as in the original (where API failures raise a plain `Exception`)."""


class RobotTypeError(RobotError, TypeError):
    """A non-str argument (or options that are not a list): a `TypeError`, as the original raises."""


EVENTS = frozenset({"go_to", "say", "ask", "is_in_room", "pick", "place"})  # queries of the robot are not events
RECORDED_WHEN_FAILED = frozenset({"go_to", "ask"})  # the original emits these trace lines before the call can fail


@dataclass(frozen=True)
class Call:
    """One API call: name, arguments, the robot's location when it was made, and what it returned."""

    name: str
    args: tuple[Any, ...]
    location: str
    result: Any = None
    error: str | None = None
    recorded: bool | None = None  # whether the original records the call as a trace event (`Robot._record`)

    def __post_init__(self) -> None:
        if self.recorded is None:  # a call built by hand: an event, failed go_to/ask included (as the robot's)
            failed_ok = self.error is None or self.name in RECORDED_WHEN_FAILED
            object.__setattr__(self, "recorded", self.name in EVENTS and failed_ok)

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
    """Rooms in order, the objects in each room, people per room with their queued answers, and the start room."""

    rooms: list[str]
    start: str
    objects: dict[str, list[str]] = field(default_factory=dict)
    people: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # room -> person -> answers in order

    def to_json(self) -> dict[str, Any]:
        return {"rooms": list(self.rooms), "start": self.start, "objects": self.objects, "people": self.people}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> WorldState:
        return cls(
            rooms=[str(r) for r in data["rooms"]],
            start=str(data["start"]),
            objects={str(k): [str(x) for x in v] for k, v in dict(data.get("objects") or {}).items()},
            people={
                str(room): {str(p): [str(a) for a in answers] for p, answers in dict(people).items()}
                for room, people in dict(data.get("people") or {}).items()
            },
        )


def found(pattern: str, text: str) -> bool:
    """The original's matching: `pattern` (the state's name, label or answer, or a check's regex) searched in
    `text`, case-insensitively; a pattern that is no valid regex is searched as plain text."""
    try:
        return re.search(pattern, text, re.IGNORECASE) is not None
    except re.error:
        return pattern.lower() in text.lower()


def _text(api: str, value: Any) -> str:
    if not isinstance(value, str):
        raise RobotTypeError(f"Robot{api}Error: expected a str, got {type(value).__name__}")
    if len(value) > MAX_TEXT:
        raise RobotError(f"Robot{api}Error: argument longer than {MAX_TEXT} characters")
    return value


def events(trace: Sequence[Call]) -> list[Call]:
    """The calls the original's trace holds, in order: recorded events up to the first print (its trace parser stops
    at the first stdout line that is not a trace line, so anything after a print is lost)."""
    kept = []
    for c in trace:
        if c.name == "print":
            break
        if c.recorded:
            kept.append(c)
    return kept


class Robot:
    """The robot API over a copy of a WorldState; every call is appended to `trace`."""

    def __init__(self, state: WorldState) -> None:
        self.rooms = list(state.rooms)
        self.location = state.start
        self.objects = {room: list(items) for room, items in state.objects.items()}
        self.answers = {room: {p: list(a) for p, a in people.items()} for room, people in state.people.items()}
        self.holding: str | None = None  # what the program called the object it picked (place must repeat it)
        self.held: str | None = None  # the room's label of that object (what the checks judge)
        self.trace: list[Call] = []

    def _record(self, name: str, args: tuple[Any, ...], fn) -> Any:
        """Run one call and append it to the trace, failed or not.

        `recorded` follows the original's trace: a successful go_to/say/ask/is_in_room/pick/place is an event; a
        failed go_to or ask is one too (its line is printed before the move or the answer), unless its arguments
        had the wrong type (checked first); a failed pick/place/say/is_in_room is not."""
        where = self.location
        try:
            result = fn()
        except RobotError as exc:
            typed = isinstance(exc, RobotTypeError)
            self.trace.append(Call(name, args, where, None, str(exc), name in RECORDED_WHEN_FAILED and not typed))
            raise
        self.trace.append(Call(name, args, where, result, None, name in EVENTS))
        return result

    def _resolve_room(self, argument: str) -> str:
        """The first room whose name (as a regex) occurs in the argument; unknown rooms are errors."""
        for room in self.rooms:
            if found(room, argument):
                return room
        raise RobotError(f"RobotGoToError: no location matches {argument!r}")

    def print(self) -> None:
        """The program printed: in the original, a printed line ends the trace its parser reads (see `events`)."""
        self.trace.append(Call("print", (), self.location, None, None, False))

    def get_current_location(self) -> str:
        return self._record("get_current_location", (), lambda: self.location)

    def get_all_rooms(self) -> list[str]:
        return self._record("get_all_rooms", (), lambda: list(self.rooms))

    def is_in_room(self, entity: str) -> bool:
        def look() -> bool:
            name = _text("IsInRoom", entity)
            here = self.objects.get(self.location, []) + list(self.answers.get(self.location, {}))
            return any(found(thing, name) for thing in here)

        return self._record("is_in_room", (entity,), look)

    def go_to(self, location: str) -> None:
        """Move; the trace records the resolved destination as the call's result (the program gets None)."""

        def move() -> str:
            self.location = self._resolve_room(_text("GoTo", location))
            return self.location

        self._record("go_to", (location,), move)

    def _reply(self, person: str, question: str, options: list[str]) -> str:
        people = self.answers.get(self.location, {})
        name = next((p for p in people if found(p, person)), None)
        if name is None:
            raise RobotError(f"RobotAskError: nobody matching {person!r} in {self.location!r}")
        queue = people[name]  # the answer is taken first: an ask that then fails (no option fits) still used it
        if not queue:
            raise RobotError(f"RobotAskError: {person!r} has no answer")
        answer = queue.pop(0) if len(queue) > 1 else queue[0]
        for option in options:
            if found(answer, option):
                return option
        fallback = "yes" if found(answer, question) else "no"
        for option in options:
            if found(fallback, option):
                return option
        raise RobotError(f"RobotAskError: no option fits the answer of {person!r}")

    def ask(self, person: str, question: str, options: list[str]) -> str:
        def answer() -> str:
            _text("Ask", person), _text("Ask", question)
            if not isinstance(options, list):
                raise RobotTypeError(f"RobotAskError: options must be a list of str, got {type(options).__name__}")
            for option in options:
                _text("Ask", option)
            return self._reply(person, question, list(options))

        shown = tuple(options) if isinstance(options, list) else options
        return self._record("ask", (person, question, shown), answer)

    def say(self, message: str) -> None:
        def speak() -> None:
            _text("Say", message)

        return self._record("say", (message,), speak)

    def pick(self, obj: str) -> None:
        """Take an object; the trace records the room's label it took as the call's result (the program gets None)."""

        def take() -> str | None:
            _text("Pick", obj)
            if self.holding is not None:
                raise RobotError(f"RobotPickError: already holding {self.holding!r}")
            self.held = self._take_from_room(obj)
            self.holding = obj
            return self.held

        self._record("pick", (obj,), take)

    def _take_from_room(self, obj: str) -> str | None:
        here = self.objects.get(self.location, [])
        for i, label in enumerate(here):
            if found(label, obj):
                return here.pop(i)
        raise RobotError(f"RobotPickError: no {obj!r} in {self.location!r}")

    def place(self, obj: str) -> None:
        """Put the held object down; the trace records its label as the call's result (the program gets None)."""

        def put() -> str | None:
            _text("Place", obj)
            if self.holding != obj:
                raise RobotError(f"RobotPlaceError: not holding {obj!r}")
            self.objects.setdefault(self.location, []).append(obj)
            put_down, self.holding, self.held = self.held, None, None
            return put_down

        self._record("place", (obj,), put)


class RandomRobot(Robot):
    """The robustness ("executability") mode: is_in_room and ask answer at random from a seed, pick needs no object.

    go_to still validates rooms. The same seed gives the same answers in the sandbox and in the trusted replay.
    """

    def __init__(self, state: WorldState, seed: int) -> None:
        super().__init__(state)
        self.rng = random.Random(seed)

    def is_in_room(self, entity: str) -> bool:
        def guess() -> bool:
            _text("IsInRoom", entity)
            return self.rng.random() < 0.5

        return self._record("is_in_room", (entity,), guess)

    def _reply(self, person: str, question: str, options: list[str]) -> str:
        if not options:
            raise RobotError("RobotAskError: no options to choose from")
        return options[int(self.rng.random() * len(options))]

    def _take_from_room(self, obj: str) -> str | None:
        return None


def make_robot(state: WorldState, random_seed: int | None = None) -> Robot:
    """The checked robot, or the robustness-mode robot when a seed is given."""
    return Robot(state) if random_seed is None else RandomRobot(state, random_seed)
