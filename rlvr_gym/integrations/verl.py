"""verl data and reward shims: a parquet dataset for the `rlvr_gym` agent loop and `compute_score` for single-turn
envs. Neither imports verl (the agent loop itself is `rlvr_gym.integrations.verl_loop`, also reachable as
`rlvr_gym.integrations.verl.RlvrGymAgentLoop`, which imports verl on first use).

Rows carry `agent_name`, `prompt` and `raw_prompt` (the env's opening messages), `data_source` (the env id),
`extra_info = {index, env_id, seed, task_index, task_id, env_kwargs}` and `reward_model = {style, ground_truth: ""}`
(verl's reward managers index `reward_model.ground_truth` on every row, so the column exists, empty). No column holds
an answer, and `compute_score` ignores the `ground_truth` verl passes it: the score is the env's verifier on the task
`extra_info` names. Imports are absolute so verl can also load this file by path
(`reward.custom_reward_function.path`); `pkg://rlvr_gym.integrations.verl` is the surer form.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rlvr_gym.integrations.episode import CompletionScorer, task_rows

AGENT_NAME = "rlvr_gym"
LOOP_TARGET = "rlvr_gym.integrations.verl_loop.RlvrGymAgentLoop"


def dataset_rows(
    env_id: str,
    n: int,
    *,
    seed: int = 0,
    env_kwargs: Mapping[str, Any] | None = None,
    agent_name: str = AGENT_NAME,
) -> list[dict[str, Any]]:
    """verl dataset rows for seeds `seed .. seed+n-1` of `env_id` (see the module docstring for the columns).

    `agent_name="single_turn_agent"` makes rows for verl's own single-turn loop, scored by `compute_score`.
    """
    kwargs_json = json.dumps(dict(env_kwargs or {}), sort_keys=True)
    return [
        {
            "data_source": row.env_id,
            "agent_name": agent_name,
            "prompt": row.messages,
            "raw_prompt": row.messages,
            "reward_model": {"style": "rule", "ground_truth": ""},
            "extra_info": {
                "index": i,
                "env_id": row.env_id,
                "seed": row.seed,
                "task_index": row.task_index,
                "task_id": row.task_id,
                "env_kwargs": kwargs_json,
            },
        }
        for i, row in enumerate(task_rows(env_id, n, seed=seed, env_kwargs=env_kwargs))
    ]


def make_parquet(
    env_id: str,
    n: int,
    path: str | Path,
    *,
    seed: int = 0,
    env_kwargs: Mapping[str, Any] | None = None,
    agent_name: str = AGENT_NAME,
) -> Path:
    """Write `dataset_rows` as a parquet file verl's `RLHFDataset` reads (`data.train_files=[path]`)."""
    import pandas as pd

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = dataset_rows(env_id, n, seed=seed, env_kwargs=env_kwargs, agent_name=agent_name)
    pd.DataFrame(rows).to_parquet(path)
    return path


def agent_loop_yaml(path: str | Path) -> Path:
    """Write the one-entry file for `actor_rollout_ref.rollout.agent.agent_loop_config_path`."""
    path = Path(path)
    path.write_text(f"- name: {AGENT_NAME}\n  _target_: {LOOP_TARGET}\n", encoding="utf-8")
    return path


def env_kwargs_of(extra_info: Mapping[str, Any]) -> dict[str, Any]:
    """The env options of a row (stored as JSON text: parquet cannot hold arbitrary nested dicts per row)."""
    raw = extra_info.get("env_kwargs") or "{}"
    value = json.loads(raw) if isinstance(raw, str) else dict(raw)
    if not isinstance(value, dict):
        raise ValueError("extra_info.env_kwargs must be a JSON object")
    return value


_scorers: dict[tuple[str, str], CompletionScorer] = {}
_scorers_lock = threading.Lock()


def compute_score(
    data_source: str, solution_str: str, ground_truth: Any = None, extra_info: Mapping[str, Any] | None = None, **_: Any
) -> float:
    """verl's `reward.custom_reward_function`: the env's verdict reward for `solution_str` on the row's task.

    `ground_truth` is ignored on purpose: a dataset column must not be able to change what counts as correct.
    """
    info = dict(extra_info or {})
    env_id = str(info.get("env_id") or data_source)
    kwargs = env_kwargs_of(info)
    key = (env_id, json.dumps(kwargs, sort_keys=True))
    with _scorers_lock:
        scorer = _scorers.get(key)
        if scorer is None:
            scorer = _scorers[key] = CompletionScorer(env_id, kwargs)
    if info.get("task_index") is None:
        raise ValueError("extra_info.task_index is missing: build the dataset with make_parquet")
    verdict = scorer.verdict(info["task_index"], solution_str, info.get("task_id"))
    return float(verdict.reward)


def __getattr__(name: str) -> Any:
    """`RlvrGymAgentLoop` on first use, so this module (data and reward shims) imports without verl."""
    if name == "RlvrGymAgentLoop":
        from rlvr_gym.integrations.verl_loop import RlvrGymAgentLoop

        return RlvrGymAgentLoop
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
