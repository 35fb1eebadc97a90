"""ALFWorld verifier: replay a trajectory on the real engine; the reward is the engine's `won`, nothing else.

`verify(task, trajectory)` loads the task's game on a process-wide engine, plays the replies through the same code
path as the live env (`play.Game`) and stops at the first win or after `max_turns` replies. The policy's text
never reaches the verdict except as commands the engine accepted, so there is no self-report to trust. A
trajectory with no playable reply at all is invalid (`Verdict.valid=False`); an engine failure is an
`InfraError` (the episode becomes an infrastructure error, never a 0).

`wrong_answers(task, rng)` builds near misses that cannot win by construction (see each builder); the generator
guarantees that no proper prefix of a walkthrough wins, which the truncated and reordered ones rely on.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rlvr_gym.rubric import Criterion, Rubric
from rlvr_gym.types import InfraError, Task, Verdict

from . import engine
from .play import Game

DEFAULT_MAX_TURNS = 50
_LISTED = re.compile(r"\ban? ([a-z]+ \d+)")

RUBRIC = Rubric(
    [
        Criterion("won", lambda won, steps, invalid: float(won), 1.0),
        Criterion("steps", lambda won, steps, invalid: float(steps), 0.0),
        Criterion("invalid_actions", lambda won, steps, invalid: float(invalid), 0.0),
    ],
    pass_on="won",
)

_shared_engine: Any = None  # one engine for offline verification in this process, used under the engine lock


def outcome_verdict(won: bool, steps: int, invalid: int) -> Verdict:
    """The verdict of a played game; the live env and `verify` both build it here, so they always agree."""
    if won:
        return RUBRIC.score("task completed", won=True, steps=steps, invalid=invalid)
    if steps == invalid:
        error = "no reply in the trajectory was a playable action" if steps else "empty trajectory"
        verdict = RUBRIC.score(error, won=False, steps=steps, invalid=invalid)
        return verdict.model_copy(update={"valid": False, "error": error})
    return RUBRIC.score(f"the task was not completed in {steps} step(s)", won=False, steps=steps, invalid=invalid)


def game_file(task: Task) -> str:
    """Where the task's game is: its recorded file, else rebuilt from the generator config in its metadata."""
    truth = task.ground_truth if isinstance(task.ground_truth, dict) else {}
    path = truth.get("gamefile")
    if path and Path(path).exists():
        return str(path)
    config = task.metadata.get("generator")
    if config is None:
        raise InfraError(f"{task.id}: game file {path!r} is missing and the task has no generator config")
    from .generator import GameGenerator, GeneratorConfig

    meta = task.metadata
    rebuilt = GeneratorConfig(
        **{**config, "task_types": tuple(config["task_types"]), "split": meta["split"], "seed": meta["seed"]}
    )
    return GameGenerator(rebuilt).game(int(meta["index"])).path


def _engine(path: str) -> Any:
    global _shared_engine
    _shared_engine = engine.load_game(_shared_engine, path)
    return _shared_engine


def verify(task: Task | dict[str, Any], trajectory: Sequence[str], *, max_turns: int = DEFAULT_MAX_TURNS) -> Verdict:
    """Replay `trajectory` (one reply per turn) on the task's game; at most `max_turns` replies count."""
    task = task if isinstance(task, Task) else Task.model_validate(task)
    path = game_file(task)
    replies = [reply if isinstance(reply, str) else str(reply) for reply in list(trajectory)[:max_turns]]
    with engine.engine_lock():
        try:
            game = Game(_engine(path))
            game.start()
            for steps, reply in enumerate(replies, start=1):
                if game.play(reply).won:
                    return outcome_verdict(True, steps, game.invalid)
        except Exception as exc:  # the engine's own failure, not the trajectory's
            raise InfraError(f"ALFWorld engine failed on {task.id}: {type(exc).__name__}: {exc}") from exc
    return outcome_verdict(False, len(replies), game.invalid)


# ---- wrong answers -------------------------------------------------------------------------------------------------
def _kind(name: str) -> str:
    """`cabinet 3` -> `cabinet` (the class of an instance name)."""
    head, _, tail = name.rpartition(" ")
    return head if tail.isdigit() else name


def _replace_names(actions: list[str], names: set[str], new: str) -> list[str]:
    out = []
    for action in actions:
        words = action
        for name in names:
            words = f" {words} ".replace(f" {name} ", f" {new} ").strip()
        out.append(words)
    return out


def _mentioned(actions: list[str], kind: str) -> set[str]:
    """Instance names of one class in the walkthrough (`apple 1`, `apple 2`)."""
    found = set()
    for action in actions:
        words = action.split()
        for i in range(len(words) - 1):
            if words[i + 1].isdigit() and words[i] == kind:
                found.add(f"{words[i]} {words[i + 1]}")
    return found


def _room_receptacles(task: Task, walkthrough: list[str]) -> list[str]:
    """Receptacle names from the opening's room listing (engine text) and the walkthrough's `go to` targets."""
    opening = task.prompt if isinstance(task.prompt, str) else ""
    listing = opening.split("you see", 1)[1].split("\n", 1)[0] if "you see" in opening else ""
    found = set(_LISTED.findall(listing)) | {a[len("go to ") :] for a in walkthrough if a.startswith("go to ")}
    return sorted(found)


def wrong_answers(task: Task, rng: random.Random) -> list[list[str]]:
    """Near misses that cannot win: truncated, reordered, wrong object, wrong receptacle."""
    truth = task.ground_truth if isinstance(task.ground_truth, dict) else {}
    walkthrough = list(task.reference_actions or truth.get("walkthrough") or [])
    if not walkthrough:
        return []
    params = truth.get("params") or {}
    out: list[list[str]] = []
    if len(walkthrough) >= 2:
        out.append(walkthrough[:-1])  # stops one step short: no proper prefix wins (generator invariant)
        out.append(walkthrough[: len(walkthrough) // 2])
        rest = walkthrough[:-1]
        rng.shuffle(rest)
        out.append([walkthrough[-1], *rest])  # the finishing action first (a no-op there), then a reshuffled prefix
    target = str(params.get("object_target", "")).lower()
    targets = _mentioned(walkthrough, target)
    decoys = [o for o in truth.get("seen_objects", []) if _kind(o) != target]
    if targets and decoys:  # every mention of the target swapped for an object of another class
        out.append(_replace_names(walkthrough, targets, rng.choice(sorted(decoys))))
    goal = str(params.get("parent_target", "")).lower()
    places = _mentioned(walkthrough[-1:], goal)
    others = [r for r in _room_receptacles(task, walkthrough) if _kind(r) != goal]
    if goal and places and others:  # the object carried to a receptacle of another class
        out.append(_replace_names(walkthrough, places, rng.choice(others)))
    unique: list[list[str]] = []
    for candidate in out:
        if candidate and candidate != walkthrough and candidate not in unique:
            unique.append(candidate)
    return unique
