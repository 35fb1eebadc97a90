"""Real model replicas: SmolLM2-135M in Ray actors answers exactly as the same model in this process (greedy)."""

from __future__ import annotations

import functools

import pytest
from conftest import skip_without_ray
from test_ray_backend import fingerprint

from rlvr_gym import SamplingParams
from rlvr_gym.rollout import collect_sync

pytestmark = pytest.mark.heavy


def test_smollm2_replicas_on_ray_give_the_local_models_episodes():
    skip_without_ray()
    from rlvr_gym.agents.chat import ChatAgent
    from rlvr_gym.agents.hf import HFPolicy
    from rlvr_gym.agents.models import smollm2_path
    from rlvr_gym.scale import RayPolicy, connect

    path = str(smollm2_path())
    greedy = SamplingParams(temperature=0.0, max_new_tokens=24)
    local_policy = HFPolicy.from_pretrained(path, max_batch_size=1, dtype="float32")
    local = collect_sync("rlvr/MathArithmetic-v0", ChatAgent(local_policy, sampling=greedy), tasks=3, concurrency=1)
    with connect(num_cpus=2):
        factory = functools.partial(HFPolicy.from_pretrained, path, max_batch_size=1, dtype="float32", num_threads=1)
        policy = RayPolicy(factory, replicas=2, tokenizer=local_policy.tokenizer)
        try:
            remote = collect_sync("rlvr/MathArithmetic-v0", ChatAgent(policy, sampling=greedy), tasks=3, concurrency=1)
        finally:
            policy.kill()
    assert [fingerprint(e) for e in remote] == [fingerprint(e) for e in local]
    assert [t.token_ids for e in remote for t in e.turns] == [t.token_ids for e in local for t in e.turns]
    assert all(e.turns[0].token_ids for e in remote), "token-in/token-out: the replicas return token ids"
