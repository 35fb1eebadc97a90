"""EVALUATION ONLY: the original RoboEval tasks, read at run time from a checkout the user supplies.

Licence: RoboEval's repository (ut-amrl/codebotler) is BSD-3-Clause with a machine-learning restriction: its
contents "may not be used as training data for any machine learning model". Nothing of it ships with this project.
This loader reads the task modules from the user's own checkout (`roboeval_path=` or `$RLVR_ROBOEVAL_PATH`),
offers them only as the `eval` split, marks every task `eval_only`, and refuses the train split. Use it to
report pass@1 as the original does (a program passes a prompt only if every state's check holds), never to train.

How it judges: the answer is rewritten as the original runner rewrites it (`convert.py`), runs in our sandbox on each of the task's states (converted to our `WorldState`), the
parent replays the call log on its own simulator, turns the trace into the checkout's own trace objects
(`benchmark.rtl.Trace` of `TraceElement(kind, value1, value2)`) and calls the task's own test function.
Importing the checkout runs its Python code in this process: point it only at a checkout you trust.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any

from rlvr_gym import Task
from rlvr_gym.family import TaskSource
from rlvr_gym.types import EnvUnavailable

from .simulator import Call, WorldState, events
from .tasks import API_DOC, FORMAT
from .temporal import values

ENV_VAR = "RLVR_ROBOEVAL_PATH"
LICENCE_NOTE = (
    "RoboEval tasks are evaluation-only: the RoboEval licence forbids using its contents as training data for any "
    "machine learning model."
)
_import_lock = threading.Lock()


def checkout_path(path: str | os.PathLike | None) -> Path:
    """The checkout root, from the argument or $RLVR_ROBOEVAL_PATH; refuses (EnvUnavailable) without one."""
    chosen = path or os.environ.get(ENV_VAR)
    if not chosen:
        raise EnvUnavailable(f"RoboEval needs a checkout you supply: roboeval_path=... or ${ENV_VAR}. {LICENCE_NOTE}")
    root = Path(chosen).expanduser().resolve()
    if not (root / "benchmark" / "tasks").is_dir() or not (root / "benchmark" / "rtl.py").is_file():
        raise EnvUnavailable(f"{root} is not a RoboEval checkout (benchmark/tasks/ and benchmark/rtl.py expected)")
    return root


def _load(root: Path, relative: str, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, root / relative)
    if spec is None or spec.loader is None:
        raise EnvUnavailable(f"cannot load {relative} from {root}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@lru_cache(maxsize=4)
def load_checkout(root: Path) -> tuple[ModuleType, list[ModuleType]]:
    """The checkout's `benchmark.rtl` and its task modules (sorted by file name), imported once per process."""
    with _import_lock:
        sys.path.insert(0, str(root))
        try:
            rtl = importlib.import_module("benchmark.rtl")
            files = sorted((root / "benchmark" / "tasks").glob("*.py"))
            modules = [_load(root, str(f.relative_to(root)), f"benchmark.tasks.{f.stem}") for f in files]
        except EnvUnavailable:
            raise
        except Exception as exc:  # a broken checkout is unavailable, not a crash
            raise EnvUnavailable(f"RoboEval checkout at {root} failed to load: {type(exc).__name__}: {exc}") from exc
        finally:
            sys.path.remove(str(root))
    return rtl, [m for m in modules if hasattr(m, "tests") and hasattr(m, "prompts")]


def world_of(state: Any) -> WorldState:
    """Our WorldState from a checkout `State` (locations, objects, agents as (name, answers), robot_location)."""
    people: dict[str, dict[str, list[str]]] = {}
    for room, agents in state.agents.items():
        for name, answers in agents:  # a later agent with the same name is never the first match: unreachable
            people.setdefault(room, {}).setdefault(name, list(answers))
    return WorldState(rooms=list(state.locations), start=state.robot_location, objects=dict(state.objects),
                      people=people)  # fmt: skip


def events_of(trace: Sequence[Call]) -> list[tuple[str, str, list[str] | None]]:
    """Our trace as the original's events (`simulator.events`: go_to/ask even when they failed, pick/place only on
    success, nothing after a print), values as the program passed them (the converter lower-cased its literals)."""
    return [values(c) for c in events(trace)]


class RoboEvalTasks(TaskSource):
    """The checkout's tasks, one per (task module, prompt); eval split only."""

    family = "roboeval"
    allows_duplicates = True  # the checkout decides its prompts; we never alter them

    def __init__(self, roboeval_path: str | os.PathLike | None = None, *, split: str = "eval", seed: int = 0) -> None:
        if split != "eval":
            raise ValueError(f"split={split!r} refused. {LICENCE_NOTE}")
        super().__init__(split="eval", seed=seed)
        self.root = checkout_path(roboeval_path)
        _rtl, modules = load_checkout(self.root)
        self.entries = [(m, i) for m in modules for i in range(len(m.prompts))]

    def __len__(self) -> int:
        return len(self.entries)

    def task(self, index: int) -> Task:
        module, prompt_index = self.entries[index]
        tests = module.tests
        truth = {
            "kind": "roboeval",
            "roboeval_checkout": str(self.root),
            "roboeval_module": module.__name__,
            "states": [world_of(t["state"]).to_json() for t in tests],
            "timeout_ok": [bool(t.get("timeout", False)) for t in tests],
            "checks": None,
            "mutants": [],
        }
        instruction = str(module.prompts[prompt_index])
        return self.make_task(index, prompt=f"{API_DOC}\n\n{FORMAT}\n\nTask: {instruction}", ground_truth=truth,
                              reference_actions=None, roboeval_task=getattr(module, "name", module.__name__),
                              prompt_index=prompt_index, eval_only=True, licence=LICENCE_NOTE)  # fmt: skip


def judges(truth: dict[str, Any]) -> list[Callable[[Sequence[Call]], bool]]:
    """One function per state: the checkout's own test over the checkout's own trace objects."""
    rtl, modules = load_checkout(checkout_path(truth["roboeval_checkout"]))
    module = next(m for m in modules if m.__name__ == truth["roboeval_module"])

    def judge(test: Callable[[Any], bool]) -> Callable[[Sequence[Call]], bool]:
        def run(trace: Sequence[Call]) -> bool:
            elements = [rtl.TraceElement(kind, v1, v2) for kind, v1, v2 in events_of(trace)]
            try:
                return bool(test(rtl.Trace(elements)))
            except Exception:  # the original counts a raising test as unsatisfied
                return False

        return run

    return [judge(t["test"]) for t in module.tests]
