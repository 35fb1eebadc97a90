"""Procedural ALFWorld games from the shipped scenes, each verified by the planner and by a replay to `won`.

Which game index `i` holds is decided before any engine runs, so that splits and uniqueness hold by design:

1. Goals. Every (scene, task targets, goal template) a scene can host is listed (`problem.goal_params`). A goal's
   *fingerprint* is what the agent sees of it before acting: the goal sentence and the multiset of receptacle
   names in the room listing. The opening observation is a function of exactly these, so equal openings mean
   equal fingerprints. Goals whose fingerprint hash falls in the other split (`rlvr_gym.family.split_of`) are
   dropped, and so is every later goal repeating a fingerprint: train and eval never share an opening, and no
   opening repeats within a split.
2. Order. Per task type, goals are interleaved round-robin over the scenes (scene order and each scene's goals
   shuffled by the seed); index `i` is goal `i // n_types` of task type `task_types[i % n_types]`.
3. Game. Objects are placed with randomness from (split, seed, index, attempt) until the planner finds a plan of at
   most `max_plan_length` steps whose replay wins only at its last step (so every truncated walkthrough loses).

Generated games live in a cache directory keyed by a hash of the config and the index ($RLVR_GYM_CACHE/alfworld or
~/.cache/rlvr-gym/alfworld), never in site-packages; each game folder holds `game.tw-pddl` (with walkthrough),
`traj_data.json` (what alfworld's AlfredTWEnv expects) and `meta.json`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import random
import shutil
import tempfile
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from rlvr_gym.family import split_of, stable_seed

from .problem import goal_params, goal_templates, goal_text, restrict_scene, sample_problem
from .scenes import TASK_ALIASES, TASK_TYPES, Scene, alfworld_root, display_kind, load_scene, scene_numbers

GENERATOR_VERSION = 3
SCENE_SETS = ("seen", "unseen", "all")
EVAL_FRACTION = 0.1


class GenerationError(RuntimeError):
    """No verified game could be built for an index within the attempt budget."""


def canonical_task_type(name: str) -> str:
    name = TASK_ALIASES.get(name, name)
    if name not in TASK_TYPES:
        raise ValueError(f"unknown ALFWorld task type {name!r}; choose from {TASK_TYPES} or {tuple(TASK_ALIASES)}")
    return name


@dataclass(frozen=True)
class GeneratorConfig:
    """What defines a generated game set; every field enters the cache key.

    `split` is the task split (train/eval, disjoint by goal fingerprint); `scenes` the ALFRED scene set the games
    are built in (`seen` = ALFRED train scenes, `unseen` = its test scenes, for out-of-distribution evaluation).
    """

    task_types: tuple[str, ...] = TASK_TYPES
    split: str = "train"
    scenes: str = "seen"
    seed: int = 0
    max_distractor_types: int = 8
    max_instances: int = 3
    max_plan_length: int = 40
    max_attempts: int = 30
    max_receptacles: int | None = None  # None = every receptacle of the scene; small values make easy games

    def __post_init__(self) -> None:
        object.__setattr__(self, "task_types", tuple(canonical_task_type(t) for t in self.task_types))
        if self.split not in ("train", "eval"):
            raise ValueError(f"split must be 'train' or 'eval', got {self.split!r}")
        if self.scenes not in SCENE_SETS:
            raise ValueError(f"scenes must be one of {SCENE_SETS}, got {self.scenes!r}")

    def key(self) -> str:
        data = {**asdict(self), "version": GENERATOR_VERSION}
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Goal:
    """One task a scene can host, and what the agent sees of it before acting (`fingerprint`)."""

    task_type: str
    scene: int
    params: tuple[tuple[str, str], ...]
    template: int
    desc: str
    receptacles: tuple[str, ...]  # receptacle ids kept in the room (all of the scene's, or a trimmed subset)
    fingerprint: str


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
    opening: str = ""  # the engine's first observation (room listing and goal): the task prompt
    seen_objects: list[str] = field(default_factory=list)  # objects shown along the walkthrough (wrong answers)
    fingerprint: str = ""


def cache_root() -> Path:
    base = os.environ.get("RLVR_GYM_CACHE")
    return (Path(base) if base else Path.home() / ".cache" / "rlvr-gym") / "alfworld"


def _domain_and_grammar() -> tuple[str, str]:
    data = alfworld_root() / "data"
    return (data / "alfred.pddl").read_text(), (data / "alfred.twl2").read_text()


def room_key(names: list[str]) -> str:
    """The room listing's content: receptacle names as shown, with their counts (`cabinet` x 13, ...), order-free."""
    return json.dumps(sorted(Counter(names).items()))


def goal_fingerprint(desc: str, room: str) -> str:
    """Hash of the visible goal: the goal sentence and the room listing (`room_key`)."""
    return hashlib.sha256(f"{desc}\n{room}".encode()).hexdigest()


@functools.cache
def _scene_params(task_type: str, number: int) -> tuple[dict[str, str], ...]:
    return tuple(goal_params(task_type, load_scene(number)))


def _trimmed(scene: Scene, task_type: str, params: dict[str, str], desc: str, config: GeneratorConfig) -> Scene:
    if config.max_receptacles is None:
        return scene
    rng = random.Random(stable_seed("alfworld-room", config.seed, scene.number, desc))
    return restrict_scene(scene, task_type, params, rng, config.max_receptacles)


def scene_goals(task_type: str, number: int, config: GeneratorConfig) -> list[Goal]:
    """Every goal of one scene for one task type, in a fixed order (both templates of each target)."""
    scene = load_scene(number)
    full = room_key([display_kind(r.id) for r in scene.receptacles])
    goals = []
    for params in _scene_params(task_type, number):
        for template in range(len(goal_templates(task_type))):
            desc = goal_text(task_type, params, template)
            room = _trimmed(scene, task_type, params, desc, config)
            key = full if room is scene else room_key([display_kind(r.id) for r in room.receptacles])
            goals.append(
                Goal(
                    task_type,
                    number,
                    tuple(sorted(params.items())),
                    template,
                    desc,
                    tuple(r.id for r in room.receptacles),
                    goal_fingerprint(desc, key),
                )
            )
    return goals


@functools.lru_cache(maxsize=64)
def goal_order(config: GeneratorConfig, task_type: str) -> tuple[Goal, ...]:
    """This split's goals of one task type: fingerprints in the split, first occurrence only, round-robin by scene."""
    numbers = [n for n in scene_numbers(config.scenes) if _scene_params(task_type, n)]
    random.Random(stable_seed("alfworld-scenes", config.seed, task_type)).shuffle(numbers)
    seen: set[str] = set()
    per_scene = []
    for number in numbers:
        keep = []
        for goal in scene_goals(task_type, number, config):
            if goal.fingerprint in seen or split_of(goal.fingerprint, EVAL_FRACTION) != config.split:
                continue
            seen.add(goal.fingerprint)
            keep.append(goal)
        random.Random(stable_seed("alfworld-goals", config.seed, task_type, number)).shuffle(keep)
        per_scene.append(keep)
    rounds = max((len(g) for g in per_scene), default=0)
    return tuple(goals[r] for r in range(rounds) for goals in per_scene if r < len(goals))


def capacity(config: GeneratorConfig) -> int:
    """Number of distinct games this config can index (task types cycle, so the scarcest type bounds it)."""
    return len(config.task_types) * min(len(goal_order(config, t)) for t in config.task_types)


def goal_for(config: GeneratorConfig, index: int) -> Goal:
    if index < 0:
        raise IndexError("task index must be >= 0")
    types = config.task_types
    order = goal_order(config, types[index % len(types)])
    k = index // len(types)
    if k >= len(order):
        raise IndexError(f"index {index} is beyond the {capacity(config)} distinct games of this config")
    return order[k]


@dataclass
class Verified:
    """What a replay of the planner's plan established about a game."""

    walkthrough: list[str]
    opening: str
    seen_objects: list[str]


def verify_game(path: str, max_plan_length: int, env: Any = None) -> Verified | None:
    """Planner walkthrough of a game, or None when unsolvable, too long, or its replay does not win exactly at the
    last step (a game won earlier would make truncated walkthroughs winners).

    `env` is an engine to reuse (see `engine.load_game`); without one a fresh engine is started and closed.
    """
    from . import engine

    with engine.engine_lock():
        return _verify(env, path, max_plan_length)


def _verify(env: Any, path: str, max_plan_length: int) -> Verified | None:
    from . import engine
    from .belief_tracker import GroundTruthTracker

    own = env is None
    env = engine.load_game(env, path, policy_commands=True)
    try:
        state = env.reset()
        plan = list(state.get("policy_commands") or [])
        if not plan or len(plan) > max_plan_length:
            return None
        engine.set_policy_commands(env, False)
        state = env.reset()
        opening = state.feedback
        tracker = GroundTruthTracker()
        for command in plan:
            if state["won"] or command not in state["admissible_commands"]:
                return None
            state, _, _ = env.step(command)
            tracker.observe(state.feedback)
        if not state["won"]:
            return None
        return Verified(plan, opening, sorted(tracker.objects))
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

    def __len__(self) -> int:
        return capacity(self.config)

    def game(self, index: int) -> GameRecord:
        goal = goal_for(self.config, index)
        meta = self.dir / f"{index:06d}" / "meta.json"
        if meta.exists():
            return GameRecord(**json.loads(meta.read_text()))
        return self._generate(index, goal, meta.parent)

    def _rng(self, index: int, attempt: int) -> random.Random:
        return random.Random(stable_seed("alfworld", self.config.split, self.config.seed, index, attempt))

    def _generate(self, index: int, goal: Goal, folder: Path) -> GameRecord:
        cfg = self.config
        scene = load_scene(goal.scene)
        scene = replace(scene, receptacles=tuple(r for r in scene.receptacles if r.id in set(goal.receptacles)))
        params = dict(goal.params)
        domain, grammar = _domain_and_grammar()
        self.dir.mkdir(parents=True, exist_ok=True)
        for attempt in range(cfg.max_attempts):
            problem = sample_problem(
                goal.task_type,
                scene,
                params,
                self._rng(index, attempt),
                max_distractor_types=cfg.max_distractor_types,
                max_instances=cfg.max_instances,
            )
            tmp = Path(tempfile.mkdtemp(prefix=f".{index:06d}-", dir=self.dir))
            game = {
                "pddl_domain": domain,
                "grammar": grammar.replace("UNKNOWN GOAL", goal.desc),
                "pddl_problem": problem.pddl(f"rlvr_{index}"),
                "solvable": False,
            }
            game_path = tmp / "game.tw-pddl"
            game_path.write_text(json.dumps(game))
            verified = verify_game(str(game_path), cfg.max_plan_length, self._engine_for(game_path))
            if verified is None:
                shutil.rmtree(tmp, ignore_errors=True)
                continue
            game.update(solvable=True, walkthrough=verified.walkthrough)
            game_path.write_text(json.dumps(game))
            traj = {
                "task_type": goal.task_type,
                "scene": {"floor_plan": f"FloorPlan{scene.number}"},
                "pddl_params": {**params, "object_sliced": False},
                "task_desc": goal.desc,
            }
            (tmp / "traj_data.json").write_text(json.dumps(traj))
            record = GameRecord(
                index=index,
                path=str(folder / "game.tw-pddl"),
                task_type=goal.task_type,
                task_desc=goal.desc,
                scene=scene.number,
                params=params,
                walkthrough=verified.walkthrough,
                attempt=attempt,
                extra={"seed": cfg.seed, "split": cfg.split, "scenes": cfg.scenes, "config": cfg.key()},
                opening=verified.opening,
                seen_objects=verified.seen_objects,
                fingerprint=goal.fingerprint,
            )
            (tmp / "meta.json").write_text(json.dumps(asdict(record)))
            try:
                tmp.rename(folder)
            except OSError:  # another process finished the same index first: keep theirs
                shutil.rmtree(tmp, ignore_errors=True)
            return GameRecord(**json.loads((folder / "meta.json").read_text()))
        raise GenerationError(
            f"no verified game for index {index} ({goal.desc!r} in scene {goal.scene}) after "
            f"{cfg.max_attempts} attempts"
        )

    def _engine_for(self, game_path: Path) -> Any:
        if self._engine is None:
            from . import engine

            with engine.engine_lock():
                self._engine = engine.start_game(str(game_path), policy_commands=True)
        return self._engine

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
