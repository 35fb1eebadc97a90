"""Step grouping keys: ReBel's belief-equivalence classes (§1.3) and GiGPO's anchor observations (§1.5).

A step group is the set of steps, within one task group (same env seed, `uid`), that are considered to be in the
same situation, so that their returns can be compared. GiGPO uses identical raw observations, which in a POMDP are
mostly singletons; ReBel uses a small canonical summary of the cumulative belief plus the env-derived phase.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Hashable, Sequence
from typing import Any

from rlvr_gym.envs.alfworld.belief import Belief

from .rewards import norm_name

NULL_KEY = "null"
GRANULARITIES = ("gt_phase", "subgoal", "medium", "fine")


def belief_key_dict(belief: Belief, env_phase: str, granularity: str = "gt_phase") -> dict[str, Any]:
    """The canonical dict hashed into a step key (`gt_phase` is the final setting of the reference)."""
    target = norm_name(belief.target)
    if granularity == "gt_phase":
        return {
            "env_phase": env_phase,
            "target": target,
            "has_inventory": belief.holding(),
            "has_state_change": len(belief.states) > 0,
        }
    if granularity == "subgoal":
        return {"phase": belief.phase, "target": target}
    if granularity == "medium":
        return {"phase": belief.phase, "target": target, "has_inventory": belief.holding()}
    if granularity == "fine":
        return belief.to_json() | {"env_phase": env_phase}
    raise ValueError(f"unknown belief granularity {granularity!r}; choose from {GRANULARITIES}")


def belief_step_key(belief: Belief | None, env_phase: str, granularity: str = "gt_phase") -> str:
    """md5 of the canonical belief dict; a null/invalid belief maps to one fixed key."""
    if belief is None:
        return NULL_KEY
    canon = json.dumps(belief_key_dict(belief, env_phase, granularity), sort_keys=True, separators=(",", ":"))
    return hashlib.md5(canon.encode("utf-8")).hexdigest()


def anchor_clusters(anchors: Sequence[str], similarity: float | None = None) -> list[int]:
    """Cluster ids of anchor observations: exact equality, or greedy difflib ratio >= `similarity` vs first member."""
    ids: list[int] = []
    exact: dict[str, int] = {}
    heads: list[str] = []
    for anchor in anchors:
        if anchor in exact:
            ids.append(exact[anchor])
            continue
        found = -1
        if similarity is not None:
            for cid, head in enumerate(heads):
                if difflib.SequenceMatcher(None, head, anchor).ratio() >= similarity:
                    found = cid
                    break
        if found < 0:
            found = len(heads)
            heads.append(anchor)
        exact[anchor] = found
        ids.append(found)
    return ids


def scoped_keys(
    group_ids: Sequence[str], step_keys: Sequence[Sequence[Hashable]], task_keys: Sequence[str] | None = None
) -> list[list[tuple[Hashable, ...]]]:
    """Make step keys local to their task group (and task type): steps of different seeds never share a group."""
    out = []
    for i, keys in enumerate(step_keys):
        scope: tuple[Hashable, ...] = (group_ids[i],) if task_keys is None else (group_ids[i], task_keys[i])
        out.append([(*scope, key) for key in keys])
    return out
