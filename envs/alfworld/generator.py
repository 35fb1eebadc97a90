"""Procedural ALFWorld games from the shipped scenes, each verified by the planner and by a replay to `won`.

Game `i` of a config is a pure function of (config, i): its task type is `task_types[i % n]`, everything else is
drawn from `random.Random(f"alfworld:{seed}:{split}:{i}")`. Generated games live in a cache directory keyed by a
hash of the config and the index ($RLVR_GYM_CACHE/alfworld or ~/.cache/rlvr-gym/alfworld), never in site-packages;
each game folder holds `game.tw-pddl` (with walkthrough), `traj_data.json` (what alfworld's AlfredTWEnv expects)
and `meta.json`.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .problem import SampleError, sample_problem, task_description
from .scenes import TASK_ALIASES, TASK_TYPES, alfworld_root, constants, load_scene, room_type, scene_numbers

GENERATOR_VERSION = 1


class GenerationError(RuntimeError):
    """No verified game could be built for an index within the attempt budget."""


def canonical_task_type(name: str) -> str:
    name = TASK_ALIASES.get(name, name)
    if name not in TASK_TYPES:
        raise ValueError(f"unknown ALFWorld task type {name!r}; choose from {TASK_TYPES} or {tuple(TASK_ALIASES)}")
    return name


@dataclass(frozen=True)
class GeneratorConfig:
    """What defines a generated game set; every field enters the cache key."""

    task_types: tuple[str, ...] = TASK_TYPES
    split: str = "seen"
    seed: int = 0
    max_distractor_types: int = 8
    max_instances: int = 3
    max_plan_length: int = 40
    max_attempts: int = 30
    max_receptacles: int | None = None  # None = every receptacle of the scene; small values make easy games

    def __post_init__(self) -> None:
        object.__setattr__(self, "task_types", tuple(canonical_task_type(t) for t in self.task_types))
        if self.split not in ("seen", "unseen", "all"):
            raise ValueError("split must be 'seen', 'unseen' or 'all'")

    def key(self) -> str:
        data = {**asdict(self), "version": GENERATOR_VERSION}
        if data["max_receptacles"] is None:  # keys of configs from before the field existed stay valid
            del data["max_receptacles"]
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


@dataclass
class GameRecord:
    """A verified game on disk and what the env needs to know about it."""

    index: int
    path: str
    task_type: str
    task_desc: str
    scene: int
    params: dict[str, str]
    walkthrough: list[str]
    attempt: int
    extra: dict[str, Any] = field(default_factory=dict)


def cache_root() -> Path:
    base = os.environ.get("RLVR_GYM_CACHE")
    return (Path(base) if base else Path.home() / ".cache" / "rlvr-gym") / "alfworld"


def _domain_and_grammar() -> tuple[str, str]:
    data = alfworld_root() / "data"
    return (data / "alfred.pddl").read_text(), (data / "alfred.twl2").read_text()


def verify_game(path: str, max_plan_length: int, env: Any = None) -> list[str] | None:
    """Planner walkthrough of a game, or None when unsolvable, too long, or its replay does not reach `won`.

    `env` is an engine to reuse (see `engine.load_game`); without one a fresh engine is started and closed.
    """
    from . import engine

    with engine.engine_lock():
        return _verify(env, path, max_plan_length)


def _verify(env: Any, path: str, max_plan_length: int) -> list[str] | None:
    from . import engine

    own = env is None
    env = engine.load_game(env, path, policy_commands=True)
    try:
        state = env.reset()
        plan = list(state.get("policy_commands") or [])
        if not plan or len(plan) > max_plan_length:
            return None
        engine.set_policy_commands(env, False)
        state = env.reset()
        for command in plan:
            if command not in state["admissible_commands"]:
                return None
            state, _, _ = env.step(command)
        return plan if state["won"] else None
    finally:
        if own:
            env.close()


class GameGenerator:
    """Builds (or finds in the cache) the verified game for an index."""

    def __init__(self, config: GeneratorConfig, cache_dir: str | Path | None = None) -> None:
        self.config = config
        self.root = Path(cache_dir) if cache_dir else cache_root()
        self.dir = self.root / f"gen-{config.key()}"
        self._engine: Any = None  # one engine reused for every verification in this process

    def _scenes_for(self, task_type: str) -> list[int]:
        valid = constants().GOALS_VALID[task_type]
        return [n for n in scene_numbers(self.config.split) if room_type(n) in valid]

    def game(self, index: int) -> GameRecord:
        if index < 0:
            raise IndexError("task index must be >= 0")
        folder = self.dir / f"{index:06d}"
        meta = folder / "meta.json"
        if meta.exists():
            return GameRecord(**json.loads(meta.read_text()))
        record = self._generate(index, folder)
        return record

    def _generate(self, index: int, folder: Path) -> GameRecord:
        cfg = self.config
        task_type = cfg.task_types[index % len(cfg.task_types)]
        rng = random.Random(f"alfworld:{cfg.seed}:{cfg.split}:{index}")
        scenes = self._scenes_for(task_type)
        domain, grammar = _domain_and_grammar()
        self.dir.mkdir(parents=True, exist_ok=True)
        for attempt in range(cfg.max_attempts):
            scene = load_scene(rng.choice(scenes))
            try:
                problem = sample_problem(task_type, scene, rng, max_distractor_types=cfg.max_distractor_types,
                                         max_instances=cfg.max_instances, max_receptacles=cfg.max_receptacles)
            except SampleError:
                continue
            desc = task_description(problem, rng)
            tmp = Path(tempfile.mkdtemp(prefix=f".{index:06d}-", dir=self.dir))
            game = {"pddl_domain": domain, "grammar": grammar.replace("UNKNOWN GOAL", desc),
                    "pddl_problem": problem.pddl(f"rlvr_{index}"), "solvable": False}
            game_path = tmp / "game.tw-pddl"
            game_path.write_text(json.dumps(game))
            if self._engine is None:
                from . import engine

                with engine.engine_lock():
                    self._engine = engine.start_game(str(game_path), policy_commands=True)
            plan = verify_game(str(game_path), cfg.max_plan_length, self._engine)
            if plan is None:
                shutil.rmtree(tmp, ignore_errors=True)
                continue
            game.update(solvable=True, walkthrough=plan)
            game_path.write_text(json.dumps(game))
            traj = {"task_type": task_type, "scene": {"floor_plan": f"FloorPlan{scene.number}"},
                    "pddl_params": {**problem.params, "object_sliced": False}, "task_desc": desc}
            (tmp / "traj_data.json").write_text(json.dumps(traj))
            record = GameRecord(index=index, path=str(folder / "game.tw-pddl"), task_type=task_type, task_desc=desc,
                                scene=scene.number, params=problem.params, walkthrough=plan, attempt=attempt,
                                extra={"seed": cfg.seed, "split": cfg.split, "config": cfg.key()})
            (tmp / "meta.json").write_text(json.dumps(asdict(record)))
            try:
                tmp.rename(folder)
            except OSError:  # another process finished the same index first: keep theirs
                shutil.rmtree(tmp, ignore_errors=True)
            return GameRecord(**json.loads((folder / "meta.json").read_text()))
        raise GenerationError(f"no verified {task_type} game for index {index} after {cfg.max_attempts} attempts")

    def pregenerate(self, indices: list[int], workers: int | None = None) -> list[GameRecord]:
        """Generate many games in worker processes (each index is independent; the cache makes reruns free)."""
        todo = [i for i in indices if not (self.dir / f"{i:06d}" / "meta.json").exists()]
        workers = min(workers or os.cpu_count() or 1, len(todo))
        if workers > 1:
            import concurrent.futures
            import multiprocessing

            ctx = multiprocessing.get_context("spawn")
            with concurrent.futures.ProcessPoolExecutor(workers, mp_context=ctx) as pool:
                list(pool.map(_generate_one, [(self.config, str(self.root), i) for i in todo]))
        return [self.game(i) for i in indices]


def _generate_one(job: tuple[GeneratorConfig, str, int]) -> None:
    config, root, index = job
    GameGenerator(config, root).game(index)
