"""ALFWorld on the real TextWorld/alfworld engine: generated games from the shipped scenes, or the official data.

Importing this package is light (no alfworld/textworld import); the engine loads on the first reset.
"""

from __future__ import annotations

from rlvr_gym.registry import register

TASK_TYPES = (
    "pick_and_place_simple", "look_at_obj_in_light", "pick_clean_then_place_in_recep",
    "pick_heat_then_place_in_recep", "pick_cool_then_place_in_recep", "pick_two_obj_and_place",
)


def register_envs() -> None:
    register("rlvr/ALFWorld-v0", "rlvr_gym.envs.alfworld.env:ALFWorldEnv", family="alfworld",
             description="ALFWorld household tasks (6 types), generated from ALFRED scenes, planner-verified")
    register("rlvr/ALFWorldOfficial-v0", "rlvr_gym.envs.alfworld.env:ALFWorldOfficialEnv", family="alfworld",
             description="official ALFWorld games from $ALFWORLD_DATA (train / seen / unseen)")


__all__ = ["TASK_TYPES", "register_envs"]
