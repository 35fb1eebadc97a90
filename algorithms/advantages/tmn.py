"""TMN-Reweight (GoLongRL, `compute_tmn_grpo_outcome_advantage`): task-level mean normalisation + difficulty weights.

[CODE] (from that function): centred_i = r_i - mu_uid (singleton: mu = 0, var = 1, as in the source); the task scale
s_task = sqrt(mean over the task's groups of the unbiased group variance); A_i = centred_i / (s_task + 1e-6).
Difficulty reweight: m_uid = alpha * mu_uid + (1 - alpha) * mean_task(mu_uid) (singleton -> task mean);
p = mean(r_i > m_uid) within the group; samples with r_i > mu_uid are multiplied by exp(gamma * (0.5 - p)),
the others by exp(gamma * (p - 0.5)). Design choice: mean_task(mu_uid) uses the actual group means, singleton
groups included (the source's exact handling of singletons there is not documented).
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from .base import AdvantageInput, AdvantageOutput


def tmn(inp: AdvantageInput, *, alpha: float = 0.5, gamma: float = 1.0, reweight: bool = True) -> AdvantageOutput:
    groups = inp.groups()
    keys = inp.task_keys or [""] * len(inp)
    by_task: dict[str, list[np.ndarray]] = defaultdict(list)
    for ix in groups:
        by_task[keys[ix[0]]].append(ix)
    adv = np.zeros(len(inp))
    for task_groups in by_task.values():
        means = [inp.rewards[ix].mean() for ix in task_groups]
        variances = [inp.rewards[ix].var(ddof=1) if len(ix) > 1 else 1.0 for ix in task_groups]
        scale = float(np.sqrt(np.mean(variances)))
        task_mean = float(np.mean(means))
        for ix, mu in zip(task_groups, means, strict=True):
            r = inp.rewards[ix]
            single = len(ix) == 1
            centre = 0.0 if single else mu
            a = (r - centre) / (scale + 1e-6)
            if reweight:
                smoothed = task_mean if single else alpha * mu + (1 - alpha) * task_mean
                p = float(np.mean(r > smoothed))
                positive = r > centre
                a = np.where(positive, a * np.exp(gamma * (0.5 - p)), a * np.exp(gamma * (p - 0.5)))
            adv[ix] = a
    return AdvantageOutput(episode=adv, metrics={"tmn_tasks": float(len(by_task))})
