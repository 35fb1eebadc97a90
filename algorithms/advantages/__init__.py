"""Advantage estimators, registered by name: see `base` for the data model and `register_estimator`."""

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
    "AdvantageInput", "AdvantageOutput", "advantage_collapse_rate", "compute_advantages", "get_estimator",
    "list_estimators", "register_estimator",
]
