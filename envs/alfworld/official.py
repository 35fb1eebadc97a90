"""The official ALFWorld games, when the user has them (`ALFWORLD_DATA`, as set up by `alfworld-download`).

Games are `<ALFWORLD_DATA>/json_2.1.1/<split>/<task>/<trial>/game.tw-pddl` next to a `traj_data.json`; like
alfworld's AlfredTWEnv we skip movable/sliced trials and games not marked solvable. A game whose grammar still
says `UNKNOWN GOAL` gets alfworld's templated goal, written to a patched copy in our cache (never in the data).
"""

from __future__ import annotations

import functools
import json
import os
import random
from pathlib import Path

from .generator import GameRecord, cache_root, canonical_task_type, verify_game

SETS = ("train", "valid_seen", "valid_unseen")  # the folders of json_2.1.1


def data_root() -> Path | None:
    root = os.environ.get("ALFWORLD_DATA")
    return Path(os.path.expandvars(root)).expanduser() if root else None


def official_games(game_set: str, task_types: tuple[str, ...]) -> tuple[Path, ...]:
    """Sorted game files of one set (`SETS`; empty when ALFWORLD_DATA is unset or missing)."""
    return _scan(data_root(), game_set, task_types)


@functools.cache  # keyed by the data root too: a changed ALFWORLD_DATA must not see the old listing
def _scan(root: Path | None, game_set: str, task_types: tuple[str, ...]) -> tuple[Path, ...]:
    if root is None or game_set not in SETS:
        return ()
    base = root / "json_2.1.1" / game_set
    if not base.is_dir():
        return ()
    wanted = {canonical_task_type(t) for t in task_types}
    out = []
    for traj in sorted(base.rglob("traj_data.json")):
        folder = traj.parent
        game = folder / "game.tw-pddl"
        if "movable" in str(folder) or "Sliced" in str(folder) or not game.exists():
            continue
        if json.loads(traj.read_text()).get("task_type") not in wanted:
            continue
        if not json.loads(game.read_text()).get("solvable", False):
            continue
        out.append(game)
    return tuple(out)


def _goal_text(traj: dict, index: int) -> str:
    import alfworld.gen.goal_library as glib

    p = traj["pddl_params"]
    rng = random.Random(f"alfworld-official:{index}")
    template = rng.choice(glib.gdict[traj["task_type"]]["templates"])
    return template.format(
        obj=p["object_target"].lower(),
        recep=p["parent_target"].lower(),
        toggle=p["toggle_target"].lower(),
        mrecep=p["mrecep_target"].lower(),
    )


def official_record(game: Path, index: int) -> GameRecord:
    """A GameRecord for an official game: its walkthrough (or the planner's) and goal text."""
    traj = json.loads((game.parent / "traj_data.json").read_text())
    data = json.loads(game.read_text())
    path = game
    desc = _goal_text(traj, index)
    if "UNKNOWN GOAL" in data["grammar"] or not data.get("walkthrough"):
        patched = cache_root() / "official" / f"{game.parent.parent.name}-{game.parent.name}" / "game.tw-pddl"
        if not patched.exists():
            patched.parent.mkdir(parents=True, exist_ok=True)
            data["grammar"] = data["grammar"].replace("UNKNOWN GOAL", desc)
            patched.write_text(json.dumps(data))
            verified = None if data.get("walkthrough") else verify_game(str(patched), max_plan_length=200)
            data["walkthrough"] = data.get("walkthrough") or (verified.walkthrough if verified else [])
            patched.write_text(json.dumps(data))
        data = json.loads(patched.read_text())
        path = patched
    else:
        marker = "Your task is to: "
        start = data["grammar"].find(marker)
        if start >= 0:
            desc = data["grammar"][start + len(marker) :].split(".", 1)[0]
    return GameRecord(
        index=index,
        path=str(path),
        task_type=traj["task_type"],
        task_desc=desc,
        scene=int(traj.get("scene", {}).get("scene_num", -1)),
        params=traj["pddl_params"],
        walkthrough=list(data.get("walkthrough") or []),
        attempt=0,
        extra={"source": str(game), "split": "official"},
    )
