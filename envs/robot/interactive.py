"""The step-by-step mode: the agent issues one robot call per turn, sees its result, and may repair mistakes.

An action is one call with literal arguments, e.g. `go_to("kitchen")` or `ask("Dana", "Tea?", ["yes", "no"])`,
optionally in a ```python block. Calls are parsed with `ast` and `literal_eval` (nothing is executed) and run on
the trusted simulator. The episode plays every world state of the task in turn: `done()` ends the current one
(the robot then starts afresh in the next situation) and, after the last, the episode. The verdict is judged over
the whole trace: each state's check on the calls made in it (a state the turn limit cut short is judged on what
was done, and states never reached fail). A robot error is shown to the agent and recorded (a failed go_to or
ask is a trace event, as in the original), and the episode goes on.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import Any

from rlvr_gym import Task, Verdict

from .checkspec import holds
from .replay import API
from .simulator import Call, Robot, RobotError, WorldState
from .verifier import DEFAULT_WEIGHTS, parts_of

MAX_ACTION_CHARS = 2_000
DONE = "done()"
CALL_DOC = (
    "Act one call at a time: reply with exactly one robot call with literal arguments, for example "
    'go_to("kitchen") or ask("Dana", "Would you like tea?", ["yes", "no"]). You will see what it returned. '
    "Reply done() when the task is finished."
)


def parse_call(text: str) -> tuple[str, tuple[Any, ...]] | str:
    """(name, args) of the one call in the action, or why it is not one. Bounded: long actions are refused."""
    if len(text) > MAX_ACTION_CHARS:
        return f"action longer than {MAX_ACTION_CHARS} characters"
    body = text.strip()
    if body.startswith("```"):
        body = body[3:].removeprefix("python").strip().removesuffix("```").strip()
    try:
        node = ast.parse(body, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return "not a single robot call"
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.keywords:
        return "not a single robot call"
    name = node.func.id
    if name == "done" and not node.args:
        return ("done", ())
    if name not in API:
        return f"unknown function {name}"
    try:
        args = tuple(ast.literal_eval(a) for a in node.args)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return "arguments must be literals (strings, lists of strings)"
    if len(args) != API[name]:
        return f"{name} takes {API[name]} argument(s)"
    return name, args


def call_text(name: str, args: Sequence[Any]) -> str:
    return f"{name}({', '.join(repr(a) for a in args)})"


class Session:
    """The robot of one world state of an interactive episode and the calls made so far."""

    def __init__(self, state: WorldState) -> None:
        self.robot = Robot(state)

    def act(self, name: str, args: tuple[Any, ...]) -> str:
        try:
            value = getattr(self.robot, name)(*args)
        except RobotError as exc:
            return f"error: {exc}"
        if name == "go_to":
            return f"ok, now in {self.robot.location}"
        return "ok" if value is None else repr(value)

    @property
    def trace(self) -> tuple[Call, ...]:
        return tuple(self.robot.trace)


def judge(task: Task, traces: Sequence[Sequence[Call]]) -> Verdict:
    """The verdict over the whole episode: state k's check on the calls made in state k (missing states fail).

    Mixed as the program env's default (no code, so no token penalties): 0.8 x the share of states passed + 0.2 x
    the share of each state's conditions met, the latter only once a state passes."""
    truth = task.ground_truth
    passes = [k < len(traces) and holds(spec, traces[k]) for k, spec in enumerate(truth["checks"])]
    functional = sum(passes) / len(passes)
    credit = [sum(p(traces[k]) for p in parts) / len(parts) if k < len(traces) else 0.0
              for k, parts in enumerate(parts_of(truth))]  # fmt: skip
    temporal = sum(credit) / len(credit)
    wf, wt = DEFAULT_WEIGHTS["functional"], DEFAULT_WEIGHTS["temporal"]
    reward = (wf * functional + wt * (temporal if functional > 0 else 0.0)) / (wf + wt)
    failed = [str(k + 1) for k, ok in enumerate(passes) if not ok]
    feedback = "the task's conditions hold in every situation" if not failed else (
        f"the task's conditions do not hold in situation {', '.join(failed)}")  # fmt: skip
    return Verdict(reward=reward, passed=all(passes), components={"functional": functional, "temporal": temporal},
                   feedback=feedback)  # fmt: skip


def reference_calls(program: str, states: Sequence[WorldState]) -> list[str]:
    """The calls our own reference program makes on each state in turn, `done()` after each (trusted text)."""
    return [call for state in states for call in _calls_on(program, state)]


def _calls_on(program: str, state: WorldState) -> list[str]:
    robot = Robot(state)
    calls: list[str] = []

    def recorder(name: str):
        def call(*args: Any) -> Any:
            calls.append(call_text(name, args))
            return getattr(robot, name)(*args)

        return call

    namespace: dict[str, Any] = {name: recorder(name) for name in API}
    exec(compile(program, "<reference>", "exec"), namespace)  # noqa: S102 - the project's own reference text
    namespace["task_program"]()
    return [*calls, DONE]
