"""Trusted replay of an untrusted call log: the verdict's trace is recomputed, never taken from the candidate.

The candidate's program runs in a sandbox against a copy of the simulator, so anything it sends back may be
forged. The parent therefore keeps only the *sequence of requested calls* (name + arguments), replays it on its
own `Robot` over the same world state, and rebuilds every location, answer and holding itself. A log whose
claimed results disagree with the replay, that names an unknown call, or is malformed is rejected as
inconsistent. A forged log is thus worth exactly what a program making those calls would earn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rlvr_gym.envs.robot.simulator import Call, RobotError, WorldState, make_robot

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
LOGGED = {**API, "print": 0}  # a print is logged (it ends the original's trace) but is no robot function
MAX_CALLS = 2000
_PLAIN = (str, int, float, bool, type(None))


@dataclass(frozen=True)
class Replay:
    """The trusted trace, or why the log could not be replayed (`reason` is None when consistent)."""

    trace: tuple[Call, ...]
    reason: str | None = None
    robot_error: str | None = None  # the last robot error (a program may catch one and go on, as in the original)


def _plain_args(name: str, args: Any) -> tuple[Any, ...] | None:
    """The arguments when they are plain JSON scalars (or, for ask's options, a list of them); else None.

    Types are the robot's business: a non-str argument replays into the same robot error the sandbox raised.
    """
    if not isinstance(args, list) or len(args) != LOGGED[name]:
        return None
    for i, arg in enumerate(args):
        options = name == "ask" and i == 2 and isinstance(arg, list)
        if not isinstance(arg, _PLAIN) and not (options and all(isinstance(o, _PLAIN) for o in arg)):
            return None
    return tuple(args)


def replay(state: WorldState, log: Any, random_seed: int | None = None) -> Replay:
    """Replay `log` (JSON list of {name, args, result | error}) on a fresh trusted robot.

    A call that fails here must be logged as failed (no `result`), and one logged as failed must fail here; the
    replay goes on after it, since the program may have caught the error. So a forged log is worth what a program
    that catches errors and makes the same calls earns."""
    robot = make_robot(state, random_seed)
    if not isinstance(log, list) or len(log) > MAX_CALLS:
        return Replay((), "call log is not a bounded list")
    error = None
    for entry in log:
        name = entry.get("name") if isinstance(entry, dict) else None
        if name not in LOGGED:
            return Replay(tuple(robot.trace), f"unknown call {str(name)[:40]!r}", error)
        args = _plain_args(name, entry.get("args"))
        if args is None:
            return Replay(tuple(robot.trace), f"malformed arguments for {name}", error)
        try:
            value = getattr(robot, name)(*args)
        except RobotError as exc:
            if "result" in entry:
                return Replay(tuple(robot.trace), f"{name} claims a result but fails in the trusted replay", error)
            error = str(exc)
            continue
        if "error" in entry:
            return Replay(tuple(robot.trace), f"{name} claims an error but succeeds in the trusted replay", error)
        if "result" in entry and entry["result"] != value:
            return Replay(tuple(robot.trace), f"{name} result disagrees with trusted replay", error)
    return Replay(tuple(robot.trace), None, error)
