"""The verifiers v1 adapter against the real verifiers 0.4.0 (run in .venv-verifiers by
tests/integrations/test_isolated_trainers.py).

Loading goes through verifiers' own plugin loader; the evaluation is the real `vf-eval` CLI with its `null`
harness (a uv script verifiers starts per rollout) in a local subprocess runtime, talking to a real
OpenAI-compatible server (llama.cpp's, serving the embedded SmolLM2) on 127.0.0.1. Each recorded reward is then
checked against a replay of the model's sampled replies through a fresh env: the reward is the env's verdict.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rlvr_gym_verifiers import REWARD_NAME, RlvrGymConfig, RlvrGymEnv, RlvrGymTaskset
from verifiers.v1.utils.loaders import environment_class, taskset_class

import rlvr_gym
from rlvr_gym.agents.local_server import LlamaCppServer, server_python
from rlvr_gym.integrations.episode import EnvSession

TASKSET = "rlvr-gym-verifiers"


def test_plugin_loads_and_tasks_hold_no_answers():
    assert taskset_class(TASKSET) is RlvrGymTaskset and environment_class(TASKSET) is RlvrGymEnv
    tasks = list(RlvrGymTaskset(RlvrGymConfig(id=TASKSET, env_id="rlvr/Math-v0", num_tasks=5)))
    env = rlvr_gym.make("rlvr/Math-v0")
    assert [t.data.name for t in tasks] == [env.get_task(i).id for i in range(5)]
    for i, task in enumerate(tasks):
        assert set(task.data.info) == {"env_id", "env_kwargs", "seed", "task_index", "task_id"}
        answer = env.get_task(i).reference_actions[0]
        assert answer not in task.data.model_dump_json()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with LlamaCppServer(python=server_python(), log_path=tmp_path_factory.mktemp("srv") / "server.log") as srv:
        yield srv


def vf_eval(server, out: Path, env_id: str, num_tasks: int, env_kwargs: dict | None = None) -> list[dict]:
    """Run the real `vf-eval` CLI and return the traces it wrote."""
    argv = [
        str(Path(sys.executable).with_name("vf-eval")), TASKSET,
        "--env.taskset.env-id", env_id, "--env.taskset.num-tasks", str(num_tasks),
        "--env.taskset.env-kwargs", json.dumps(env_kwargs or {}),
        "-m", "smollm2", "--client.base-url", server.base_url, "--client.api-key-var", "RLVR_TEST_KEY",
        "-r", "1", "--no-push", "-o", str(out), "--no-rich", "--sampling.max-tokens", "48",
        "--env.player.harness.id", "null", "--env.player.runtime.type", "subprocess",
    ]
    env = {**os.environ, "RLVR_TEST_KEY": "unused"}
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=420, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (traces_file,) = out.glob("*/traces.jsonl")
    return [trace for line in traces_file.read_text().splitlines() for trace in json.loads(line)["traces"]]


def replayed_reward(trace: dict) -> float:
    """The env's verdict for the model's sampled replies, replayed in a fresh env."""
    info = trace["task"]["data"]["info"]
    session = EnvSession(info["env_id"], info["env_kwargs"])
    session.reset(task_index=info["task_index"], task_id=info["task_id"])
    replies = [n["message"]["content"] for n in trace["nodes"] if n.get("sampled")]
    assert replies, "the model produced no reply"
    for reply in replies:
        assert not session.done
        session.act(reply)
    return session.reward


def test_single_turn_eval_through_a_real_server(server, tmp_path):
    traces = vf_eval(server, tmp_path, "rlvr/MathStarter-v0", 3)
    assert len(traces) == 3
    for trace in traces:
        assert trace["ok"] and not trace["errors"]
        assert trace["rewards"][REWARD_NAME]["score"] == replayed_reward(trace)
        assert trace["info"]["rlvr_passed"] == (trace["rewards"][REWARD_NAME]["score"] == 1.0)


def test_multi_turn_eval_env_replies_are_user_turns(server, tmp_path):
    (trace,) = vf_eval(server, tmp_path, "rlvr/Sokoban-v0", 1, {"max_turns": 3})
    sampled = [n for n in trace["nodes"] if n.get("sampled")]
    assert len(sampled) == 3  # the env's turn limit ended the exchange
    first = trace["nodes"].index(sampled[0])
    roles = [(n["message"]["role"], bool(n.get("sampled"))) for n in trace["nodes"][first:]]
    assert roles == [("assistant", True), ("user", False)] * 2 + [("assistant", True)]
    assert trace["rewards"][REWARD_NAME]["score"] == replayed_reward(trace)
