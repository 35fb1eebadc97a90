"""Task-relative REINFORCE++: AZR's advantage, whitened separately inside each task-type x role batch.

AZR trains with one rollout per prompt (no groups), so the baseline is the batch: REINFORCE++ with an outcome
reward and gamma = 1 gives every token the episode reward, then whitens it over the batch. Doing that over all six
(task type, role) batches at once would let easy solve tasks set the scale for hard propose tasks; AZR whitens each
batch on its own, which is what this does. Keys come from `AdvantageInput.task_keys` (env id + task type, and the
propose and solve envs differ, so role is part of the key). A key with one episode has no baseline: advantage 0.
Whitening is per episode (each episode counts once), not per token as in verl's masked whitening.
"""

from __future__ import annotations

import numpy as np

from rlvr_gym.algorithms.advantages.base import EPS, AdvantageInput, AdvantageOutput


def task_keys_of(inp: AdvantageInput) -> list[str]:
    """The (task type, role) key of every episode (one shared key when the input carries none)."""
    return list(inp.task_keys) if inp.task_keys is not None else [""] * len(inp)


def task_relative_reinforce_pp(inp: AdvantageInput, *, std_ddof: int = 1, eps: float = EPS) -> AdvantageOutput:
    """A_i = (r_i - mean_k) / (std_k + eps) over the episodes sharing episode i's task key k."""
    keys = task_keys_of(inp)
    if len(keys) != len(inp):
        raise ValueError("task_keys must have one entry per episode")
    adv = np.zeros(len(inp))
    index: dict[str, list[int]] = {}
    for i, key in enumerate(keys):
        index.setdefault(key, []).append(i)
    for ix in index.values():
        r = inp.rewards[ix]
        if len(r) < 2:
            continue
        adv[ix] = (r - r.mean()) / (r.std(ddof=std_ddof) + eps)
    return AdvantageOutput(episode=adv, metrics={"populora/task_batches": float(len(index))})
