"""Every registered env passes `rlvr-gym check-env` (what CI promises users about our rewards)."""

from __future__ import annotations

import pytest

import rlvr_gym
from rlvr_gym.checks import FAIL, run_checks

ENV_IDS = [info.id for info in rlvr_gym.list_envs()]


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_check_env(env_id):
    report = run_checks(env_id, tasks=3, split_tasks=50, split_budget_s=2.0, floor_tasks=2)
    if report.unavailable:
        pytest.skip(report.unavailable)
    failures = [(r.check, r.detail) for r in report.results if r.status == FAIL]
    assert not failures, failures
