"""The one plug-in mechanism: Python entry-point groups, for built-in parts and third-party packages alike.

| group                  | object                                  | used by                     |
|------------------------|-----------------------------------------|-----------------------------|
| `rlvr_gym.envs`        | a function that calls `register(...)`   | `rlvr_gym.make`, `list`     |
| `rlvr_gym.env_ids`     | id -> the function that registers it    | `gymnasium.make` at import  |
| `rlvr_gym.agents`      | a factory `(arg, **options) -> Agent`   | agent specs (`openai:m@u`)  |
| `rlvr_gym.estimators`  | an advantage estimator class/function   | `algorithms.advantages`     |
| `rlvr_gym.trainers`    | a `Trainer` subclass                    | `algorithm.name` in configs |
| `rlvr_gym.commands`    | `main(argv) -> int`                     | `rlvr-gym <command>`        |

Adding a part is one file plus one line in the package's `pyproject.toml`.
"""

from __future__ import annotations

import importlib.metadata
from typing import Any

ENVS = "rlvr_gym.envs"
ESTIMATORS = "rlvr_gym.estimators"


def entry_points(group: str) -> dict[str, importlib.metadata.EntryPoint]:
    """Entry points of a group by name (first one wins when two distributions declare the same name)."""
    found: dict[str, importlib.metadata.EntryPoint] = {}
    for ep in importlib.metadata.entry_points(group=group):
        found.setdefault(ep.name, ep)
    return found


def load(group: str, name: str) -> Any:
    """Load one named plug-in object, with an error that lists what the group offers."""
    eps = entry_points(group)
    if name not in eps:
        raise KeyError(f"no {group} plug-in named {name!r}; known: {', '.join(sorted(eps)) or 'none'}")
    return eps[name].load()
