"""Advantage estimators by name: plug-ins of the `rlvr_gym.estimators` entry-point group (see `base`)."""

from .base import (
    AdvantageInput,
    AdvantageOutput,
    advantage_collapse_rate,
    compute_advantages,
    get_estimator,
    list_estimators,
    register_estimator,
)

__all__ = [
    "AdvantageInput",
    "AdvantageOutput",
    "advantage_collapse_rate",
    "compute_advantages",
    "get_estimator",
    "list_estimators",
    "register_estimator",
]
