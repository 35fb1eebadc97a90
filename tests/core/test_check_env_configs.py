"""Every shipped run config passes check-env's oracle, reward-floor and turn-budget checks with its own kwargs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlvr_gym.checks import FAIL, config_targets, run_checks

CONFIGS = sorted(Path(__file__).resolve().parents[2].glob("configs/*.yaml"))
FULL = ("oracle", "reward_floor", "turn_budget")
HELD_OUT = ("oracle", "turn_budget")  # a train config's eval kwargs change the split, not the reward: no floor rerun


def _targets() -> list[tuple[str, dict, str, tuple[str, ...]]]:
    """(env id, kwargs, first config naming them, checks); configs sharing an env and kwargs are checked once."""
    seen: dict[str, tuple[str, dict, str, tuple[str, ...]]] = {}
    for path in CONFIGS:
        for env_id, kwargs, role in config_targets(path):
            key = json.dumps([env_id, kwargs], sort_keys=True)
            checks = HELD_OUT if role == "eval" and "rollout" in str(path.read_text()) else FULL
            seen.setdefault(key, (env_id, kwargs, f"{path.name}:{role}", checks))
    return list(seen.values())


@pytest.mark.parametrize(
    ("env_id", "kwargs", "where", "checks"), _targets(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_shipped_config(env_id, kwargs, where, checks):
    """The turn budget scans the first 12 tasks (deterministic: enough to catch the ReBel configs' old
    `max_turns: 5`, which cut train game 11 and eval game 9)."""
    report = run_checks(
        env_id, tasks=2, checks=checks, env_kwargs=kwargs, split_tasks=12, split_budget_s=2.0, floor_tasks=1
    )
    if report.unavailable:
        pytest.skip(report.unavailable)
    failures = [(r.check, r.detail) for r in report.results if r.status == FAIL]
    assert not failures, (where, failures)


def test_a_config_whose_turn_limit_cuts_oracle_plans_is_caught(tmp_path):
    config = tmp_path / "short.yaml"
    config.write_text(
        "rollout:\n  env: rlvr/WebShop-v0\n  env_kwargs: {max_turns: 2}\neval:\n  env_kwargs: {split: eval}\n"
    )
    targets = config_targets(config)
    assert [(env_id, role) for env_id, _, role in targets] == [
        ("rlvr/WebShop-v0", "rollout"),
        ("rlvr/WebShop-v0", "eval"),
    ]
    report = run_checks("rlvr/WebShop-v0", tasks=2, checks=["turn_budget"], env_kwargs=targets[1][1], split_tasks=4)
    assert report.results[0].status == FAIL and "longer than max_turns=2" in report.results[0].detail
