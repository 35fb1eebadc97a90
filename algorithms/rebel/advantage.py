"""ReBel's combined advantage (§1.4) and GiGPO's (§1.5), as pure functions over per-episode arrays.

Inputs are plain: per episode a group id and an outcome; per turn a reward and a step-group key. Outputs are the
episode term (one value per episode) and the per-turn total advantage, which the trainer broadcasts to the turn's
tokens.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

from .grouping import anchor_clusters, scoped_keys

EPS = 1e-6


def discounted_returns(rewards: Sequence[float], gamma: float) -> np.ndarray:
    """R_t = r_t + γ·R_{t+1} (R_T = 0)."""
    out = np.zeros(len(rewards))
    acc = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        acc = float(rewards[t]) + gamma * acc
        out[t] = acc
    return out


def outcome_step_returns(outcome: float, n_turns: int, gamma: float) -> np.ndarray:
    """R_env,t = γ^{T−1−t}·R_g: the episode outcome discounted back from the last step."""
    return outcome * gamma ** np.arange(n_turns - 1, -1, -1, dtype=np.float64)


def keyed_normalise(
    values: np.ndarray, keys: Sequence[Hashable], *, scale_std: bool = False, eps: float = EPS
) -> np.ndarray:
    """Subtract the mean of each key's members (÷ std too if `scale_std`); a singleton key gets 0."""
    members: dict[Hashable, list[int]] = {}
    for i, key in enumerate(keys):
        members.setdefault(key, []).append(i)
    out = np.zeros(len(values))
    for ix in members.values():
        if len(ix) < 2:
            continue
        v = values[ix]
        centred = v - v.mean()
        out[ix] = centred / (v.std() + eps) if scale_std else centred
    return out


def _flatten(per_episode: Sequence[Sequence[float]]) -> tuple[np.ndarray, list[int]]:
    lengths = [len(x) for x in per_episode]
    flat = np.concatenate([np.asarray(x, dtype=np.float64) for x in per_episode]) if per_episode else np.zeros(0)
    return flat, lengths


def _split(flat: np.ndarray, lengths: Sequence[int]) -> list[np.ndarray]:
    return [part.copy() for part in np.split(flat, np.cumsum(lengths)[:-1])] if lengths else []


def per_task_normalise(
    values: np.ndarray,
    tasks: Sequence[str],
    weights: np.ndarray | None = None,
    *,
    min_rows: int = 10,
    min_std: float = 0.2,
    eps: float = EPS,
) -> np.ndarray:
    """ALFWorld per-task-type normalisation of the total advantage over valid tokens (`weights` = tokens per row).

    < `min_rows` rows: z-score with task stats blended into the global ones (blend = n/min_rows) [blend form
    INFERRED]; task std < `min_std`: subtract the task mean only; otherwise z-score with the task stats.
    """
    w = np.ones(len(values)) if weights is None else np.maximum(np.asarray(weights, dtype=np.float64), 0.0)
    if len(values) == 0 or w.sum() <= 0:
        return values.copy()

    def stats(ix: np.ndarray) -> tuple[float, float]:
        ww = w[ix] if w[ix].sum() > 0 else np.ones(len(ix))
        mean = float(np.average(values[ix], weights=ww))
        return mean, float(np.sqrt(np.average((values[ix] - mean) ** 2, weights=ww)))

    g_mean, g_std = stats(np.arange(len(values)))
    out = values.copy()
    tasks_arr = np.asarray(tasks, dtype=object)
    for task in dict.fromkeys(tasks):
        ix = np.flatnonzero(tasks_arr == task)
        t_mean, t_std = stats(ix)
        if len(ix) < min_rows:
            b = len(ix) / min_rows
            mean, std = b * t_mean + (1 - b) * g_mean, b * t_std + (1 - b) * g_std
            out[ix] = (values[ix] - mean) / (std + eps)
        elif t_std < min_std:
            out[ix] = values[ix] - t_mean
        else:
            out[ix] = (values[ix] - t_mean) / (t_std + eps)
    return out


def rebel_advantage(
    group_ids: Sequence[str],
    outcomes: Sequence[float],
    intrinsic: Sequence[Sequence[float]],
    step_keys: Sequence[Sequence[Hashable]],
    *,
    gamma: float = 0.95,
    step_weight: float = 0.5,
    task_keys: Sequence[str] | None = None,
    per_task_normalization: bool = False,
    token_counts: Sequence[Sequence[int]] | None = None,
) -> tuple[np.ndarray, list[np.ndarray]]:
    """A = A_episode + ω·A_step with A_step = norm_G(R_env) + norm_G(R_belief), each mean-normalised in its group.

    `outcomes` are the env-only episode rewards R_g (intrinsic rewards already taken out), `intrinsic[i][t]` the
    step's r_intr, `step_keys[i][t]` its belief key (scoped here to the episode's task group, and task type when
    `task_keys` is given). Returns (A_episode per episode, A_total per turn).
    """
    outcomes = np.asarray(outcomes, dtype=np.float64)
    a_ep = keyed_normalise(outcomes, list(group_ids))
    env_ret = [outcome_step_returns(outcomes[i], len(intrinsic[i]), gamma) for i in range(len(outcomes))]
    belief_ret = [discounted_returns(r, gamma) for r in intrinsic]
    keys = [k for ks in scoped_keys(group_ids, step_keys, task_keys) for k in ks]
    flat_env, lengths = _flatten(env_ret)
    flat_belief, _ = _flatten(belief_ret)
    a_step = keyed_normalise(flat_env, keys) + keyed_normalise(flat_belief, keys)
    flat_ep = np.repeat(a_ep, lengths)
    total = flat_ep + step_weight * a_step
    if per_task_normalization and task_keys is not None and len(total):
        row_tasks = [task_keys[i] for i, n in enumerate(lengths) for _ in range(n)]
        weights = None if token_counts is None else _flatten(token_counts)[0]
        total = per_task_normalise(total, row_tasks, weights)
    return a_ep, _split(total, lengths)


def gigpo_advantage(
    group_ids: Sequence[str],
    outcomes: Sequence[float],
    step_rewards: Sequence[Sequence[float]],
    anchors: Sequence[Sequence[str]],
    *,
    gamma: float = 0.95,
    step_weight: float = 1.0,
    scale_std: bool = False,
    similarity: float | None = None,
    eps: float = EPS,
) -> tuple[np.ndarray, list[np.ndarray]]:
    """GiGPO: episode term normalised across all step rows of the group (longer episodes weigh more) plus the step
    term, discounted per-step env return minus the mean over steps with the same anchor observation in the group.
    """
    outcomes = np.asarray(outcomes, dtype=np.float64)
    lengths = [len(r) for r in step_rewards]
    a_ep = np.zeros(len(outcomes))
    members: dict[str, list[int]] = {}
    for i, gid in enumerate(group_ids):
        members.setdefault(gid, []).append(i)
    for ix in members.values():
        rows = np.repeat(outcomes[ix], [max(lengths[i], 1) for i in ix])
        centred = outcomes[ix] - rows.mean()
        a_ep[ix] = centred / (rows.std() + eps) if scale_std and len(rows) > 1 else centred
    keys: list[tuple[str, int]] = []
    for ix in members.values():
        flat_anchors = [a for i in ix for a in anchors[i]]
        cluster = iter(anchor_clusters(flat_anchors, similarity))
        for i in ix:
            for _ in anchors[i]:
                keys.append((group_ids[i], next(cluster)))
    order = [i for ix in members.values() for i in ix]
    returns = np.concatenate([discounted_returns(step_rewards[i], gamma) for i in order]) if order else np.zeros(0)
    a_step_grouped = keyed_normalise(returns, keys, scale_std=scale_std, eps=eps)
    per_ep: dict[int, np.ndarray] = {}
    pos = 0
    for i in order:
        per_ep[i] = a_step_grouped[pos : pos + lengths[i]]
        pos += lengths[i]
    turns = [a_ep[i] + step_weight * per_ep[i] for i in range(len(outcomes))]
    return a_ep, turns
