"""ALFWorld on the real TextWorld/alfworld engine: generated games from the shipped scenes, or the official data.

The family template: `tasks` (task sources), `verifier` (engine replay, wrong answers), `env` (the Gymnasium env);
the engine side lives in `engine`, `generator`, `problem`, `scenes`, `official`; the reply formats the env speaks in
`actions`, `tags` and `belief`. Importing this package is light (no alfworld/textworld import); the engine loads on
the first reset. See docs/alfworld.md.
"""

from __future__ import annotations

from .scenes import TASK_TYPES


def register_envs() -> None:
    from rlvr_gym.registry import register

    register(
        "rlvr/ALFWorld-v0",
        "rlvr_gym.envs.alfworld.env:ALFWorldEnv",
        family="alfworld",
        description="ALFWorld household tasks (6 types), generated from ALFRED scenes, planner-verified",
    )
    register(
        "rlvr/ALFWorldOfficial-v0",
        "rlvr_gym.envs.alfworld.env:ALFWorldOfficialEnv",
        family="alfworld",
        description="official ALFWorld games from $ALFWORLD_DATA (train / valid_seen / valid_unseen)",
    )


__all__ = ["TASK_TYPES", "register_envs"]
