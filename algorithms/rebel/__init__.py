"""ReBel (belief-aware credit assignment) and GiGPO (anchor-observation grouping) — METHODS.md §1.

Pure math lives in `belief`, `rewards`, `grouping` and `advantage`; `estimators` registers `rebel` and `gigpo`
with the shared advantage-estimator registry (it is imported here so that loading this package registers them).
"""

from .advantage import gigpo_advantage, rebel_advantage
from .belief import Belief, ParsedOutput, format_output, initial_belief, merge_belief, parse_belief, parse_output
from .estimators import belief_trace, gigpo, rebel
from .rewards import RewardWeights, StepReward, gt_phase, intrinsic_reward

__all__ = [
    "Belief", "ParsedOutput", "RewardWeights", "StepReward", "belief_trace", "format_output", "gigpo",
    "gigpo_advantage", "gt_phase", "initial_belief", "intrinsic_reward", "merge_belief", "parse_belief",
    "parse_output", "rebel", "rebel_advantage",
]
