"""`rebel` and `gigpo` advantage estimators over runner episodes (entry points of `rlvr_gym.estimators`).

These adapters only read episodes (actions, per-turn env infos, token ids) and hand plain arrays to the pure math
in `advantage`, `rewards` and `grouping`. Env infos used (ALFWorld env provides them; others may too):
`admissible_commands` and `observation_text` after the step, `won`, `belief_gt` (ground-truth snapshot),
`anchor_obs` (raw observation before the step), `belief_initial` (first turn).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlvr_gym.algorithms.advantages.base import AdvantageInput, AdvantageOutput
from rlvr_gym.envs.alfworld.belief import initial_belief, merge_belief, parse_output
from rlvr_gym.types import Episode

from .advantage import gigpo_advantage, rebel_advantage
from .grouping import belief_step_key
from .rewards import RewardWeights, StepReward, gt_phase, intrinsic_reward


@dataclass
class BeliefTrace:
    """Per-turn ReBel quantities of one episode."""

    rewards: list[StepReward]
    keys: list[str]

    @property
    def intrinsic(self) -> np.ndarray:
        return np.array([r.total for r in self.rewards], dtype=np.float64)


def _next_observation(ep: Episode, t: int) -> str | None:
    text = ep.turns[t].info.get("observation_text")
    if text:
        return str(text)
    following = ep.turns[t + 1].observation if t + 1 < len(ep.turns) else ep.final_observation
    return "\n".join(m.text() for m in following) or None


def belief_trace(ep: Episode, *, weights: RewardWeights | None = None, granularity: str = "gt_phase") -> BeliefTrace:
    """Replay the cumulative belief over an episode and score every step against the env's ground truth."""
    weights = weights or RewardWeights()
    first = ep.turns[0].info.get("belief_initial", {}) if ep.turns else {}
    cumulative = initial_belief(first.get("objects"), first.get("receptacles"))
    rewards, keys = [], []
    for t, turn in enumerate(ep.turns):
        parsed = parse_output(turn.action)
        cumulative = merge_belief(cumulative, parsed.belief)
        info = turn.info
        phase = gt_phase(info.get("admissible_commands", []), cumulative.holding(), bool(info.get("won")))
        belief = cumulative if parsed.belief is not None else None
        rewards.append(
            intrinsic_reward(
                belief,
                format_ok=parsed.format_ok,
                admissible=turn.valid_action,
                gt=info.get("belief_gt", {}),
                phase=phase,
                next_observation=_next_observation(ep, t),
                step=t,
                weights=weights,
            )
        )
        keys.append(belief_step_key(belief, phase, granularity))
    return BeliefTrace(rewards, keys)


def _token_counts(ep: Episode) -> list[int]:
    return [len(t.token_ids) if t.token_ids else 1 for t in ep.turns]


def rebel(
    inp: AdvantageInput,
    *,
    gamma: float = 0.95,
    step_weight: float = 0.5,
    env_reward_scale: float = 10.0,
    per_task_normalization: bool = True,
    task_aware_grouping: bool = True,
    granularity: str = "gt_phase",
    weights: RewardWeights | None = None,
) -> AdvantageOutput:
    """ReBel: trajectory-equal episode term + ω·(belief-group-normalised env and belief step returns).

    `inp.rewards` are env-only outcomes (our envs never mix the intrinsic reward into them); they are scaled by
    `env_reward_scale` (ALFWorld's 10·won in the reference). Without episodes only the episode term exists.
    """
    outcomes = inp.rewards * env_reward_scale
    if not inp.episodes:
        a_ep, _ = rebel_advantage(inp.group_ids, outcomes, [[] for _ in outcomes], [[] for _ in outcomes])
        return AdvantageOutput(episode=a_ep)
    traces = [belief_trace(ep, weights=weights or RewardWeights(), granularity=granularity) for ep in inp.episodes]
    task_keys = inp.task_keys if task_aware_grouping else None
    a_ep, turns = rebel_advantage(
        inp.group_ids,
        outcomes,
        [tr.intrinsic for tr in traces],
        [tr.keys for tr in traces],
        gamma=gamma,
        step_weight=step_weight,
        task_keys=task_keys,
        per_task_normalization=per_task_normalization and inp.task_keys is not None,
        token_counts=[_token_counts(ep) for ep in inp.episodes],
    )
    all_rewards = [r for tr in traces for r in tr.rewards]
    metrics = _group_metrics(inp.group_ids, [tr.keys for tr in traces])
    if all_rewards:
        for name in ("total", "state", "task", "prediction", "format"):
            metrics[f"belief_{name}_mean"] = float(np.mean([getattr(r, name) for r in all_rewards]))
    return AdvantageOutput(episode=a_ep, turn=turns, metrics=metrics)


def gigpo(
    inp: AdvantageInput,
    *,
    gamma: float = 0.95,
    step_weight: float = 1.0,
    scale_std: bool = False,
    similarity: float | None = None,
) -> AdvantageOutput:
    """GiGPO: episode term + ω·(discounted env return − mean over same-anchor-observation steps in the group)."""
    if not inp.episodes:
        a_ep, _ = gigpo_advantage(inp.group_ids, inp.rewards, [[] for _ in inp.rewards], [[] for _ in inp.rewards])
        return AdvantageOutput(episode=a_ep)
    step_rewards = [[t.reward for t in ep.turns] for ep in inp.episodes]
    anchors = [
        [str(t.info.get("anchor_obs") or "\n".join(m.text() for m in t.observation)) for t in ep.turns]
        for ep in inp.episodes
    ]
    a_ep, turns = gigpo_advantage(
        inp.group_ids,
        inp.rewards,
        step_rewards,
        anchors,
        gamma=gamma,
        step_weight=step_weight,
        scale_std=scale_std,
        similarity=similarity,
    )
    return AdvantageOutput(episode=a_ep, turn=turns, metrics=_group_metrics(inp.group_ids, anchors))


def _group_metrics(group_ids: list[str], keys: list[list[str]]) -> dict[str, float]:
    """Share of steps whose step group is a singleton (what belief grouping is meant to reduce)."""
    counts: dict[tuple[str, str], int] = {}
    for gid, ks in zip(group_ids, keys, strict=True):
        for k in ks:
            counts[(gid, k)] = counts.get((gid, k), 0) + 1
    steps = sum(counts.values())
    if not steps:
        return {}
    singles = sum(1 for c in counts.values() if c == 1)
    return {"step_groups": float(len(counts)), "singleton_step_fraction": singles / steps}
