"""Absolute Zero (AZR) code reasoning: deduction, abduction and induction, each with a propose and a solve role.

Family layout (docs/family-template.md): `tasks.py` (seed-program solve tasks, propose tasks), `verifier.py`
(`verify`, `wrong_answers`, `judge_proposals` for the population), `env.py`. Programs are vetted statically
(`programs.py`) and run only in the sandbox's deterministic mode (`execution.py`); values come back as plain data
and are compared here. AZR's reward rules are in `rewards.py`; the population that trains on them is
`rlvr_gym.algorithms.populora` (docs/populora.md).
"""

from __future__ import annotations

_ENVS = (
    ("rlvr/AZR-Solve-v0", "AZRSolveEnv", "AZR code reasoning, solve role: deduction / abduction / induction"),
    ("rlvr/AZR-Propose-v0", "AZRProposeEnv", "AZR code reasoning, propose role (standalone reward: a valid proposal that meets the task's target)"),
)


def register_envs() -> None:
    """Register the AZR envs (called through the `rlvr_gym.envs` entry point)."""
    from rlvr_gym import register

    for env_id, cls, description in _ENVS:
        register(env_id, f"rlvr_gym.envs.azr.env:{cls}", family="azr", description=description)
