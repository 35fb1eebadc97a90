"""Trusted replay of an untrusted call log: the verdict's trace is recomputed, never taken from the candidate.

The candidate's program runs in a sandbox against a recording stub, so anything it returns may be forged.
The parent therefore keeps only the *sequence of requested calls* (name + arguments), replays it on its own
`Robot` over the same world state, and rebuilds every location, answer and holding itself. A log whose claimed
results disagree with the replay, that names an unknown call, or is malformed is rejected as inconsistent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rlvr_gym.envs.robot.simulator import Call, Robot, RobotError, WorldState

API = {
    "get_current_location": 0,
    "get_all_rooms": 0,
    "is_in_room": 1,
    "go_to": 1,
    "ask": 3,
    "say": 1,
    "pick": 1,
    "place": 1,
}
MAX_CALLS = 2000


@dataclass(frozen=True)
class Replay:
    """The trusted trace, or why the log could not be replayed (`reason` is None when consistent)."""

    trace: tuple[Call, ...]
    reason: str | None = None
    robot_error: str | None = None


def _plain_args(name: str, args: Any) -> tuple[Any, ...] | None:
    if not isinstance(args, list) or len(args) != API[name]:
        return None
    if name == "ask":
        person, question, options = args
        ok = isinstance(person, str) and isinstance(question, str) and isinstance(options, list)
        if not ok or not options or not all(isinstance(o, str) for o in options):
            return None
        return (person, question, list(options))
    return tuple(args) if all(isinstance(a, str) for a in args) else None


def replay(state: WorldState, log: Any) -> Replay:
    """Replay `log` (JSON list of {name, args, result}) on a fresh trusted Robot; stop at the first robot error."""
    robot = Robot(state)
    if not isinstance(log, list) or len(log) > MAX_CALLS:
        return Replay((), "call log is not a bounded list")
    for entry in log:
        name = entry.get("name") if isinstance(entry, dict) else None
        if name not in API:
            return Replay(tuple(robot.trace), f"unknown call {name!r}")
        args = _plain_args(name, entry.get("args"))
        if args is None:
            return Replay(tuple(robot.trace), f"malformed arguments for {name}")
        try:
            value = getattr(robot, name)(*args)
        except RobotError as exc:
            return Replay(tuple(robot.trace), None, str(exc))
        if "result" in entry and entry["result"] != value:
            return Replay(tuple(robot.trace), f"{name} result disagrees with trusted replay")
    return Replay(tuple(robot.trace))
