"""ReBel (belief-aware credit assignment) and GiGPO (anchor-observation grouping); see docs/alfworld.md.

Pure math lives in `rewards`, `grouping` and `advantage`; the belief format itself is the ALFWorld env's protocol
(`rlvr_gym.envs.alfworld.belief`), read here. `estimators` holds the `rebel` and `gigpo` estimators, which
pyproject.toml names in the `rlvr_gym.estimators` entry-point group.
"""

from rlvr_gym.envs.alfworld.belief import (
    Belief,
    ParsedOutput,
    format_output,
    initial_belief,
    merge_belief,
    parse_belief,
    parse_output,
)

from .advantage import gigpo_advantage, rebel_advantage
from .estimators import belief_trace, gigpo, rebel
from .rewards import RewardWeights, StepReward, gt_phase, intrinsic_reward

__all__ = [
    "Belief",
    "ParsedOutput",
    "RewardWeights",
    "StepReward",
    "belief_trace",
    "format_output",
    "gigpo",
    "gigpo_advantage",
    "gt_phase",
    "initial_belief",
    "intrinsic_reward",
    "merge_belief",
    "parse_belief",
    "parse_output",
    "rebel",
    "rebel_advantage",
]
