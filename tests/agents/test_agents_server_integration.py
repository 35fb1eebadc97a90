"""The openai policy against a real OpenAI-compatible server (llama.cpp's C++ server) serving the embedded SmolLM2.

Marked `integration`: it starts a real server process on 127.0.0.1. The server's virtualenv (the prebuilt
`xllamacpp` wheel) is made once, cached, by scripts/setup_server.sh, which this module runs when it is missing.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from rlvr_gym import ErrorKind, GenerationRequest, Message, PolicyError, SamplingParams
from rlvr_gym.agents.local_server import LlamaCppServer, server_python
from rlvr_gym.agents.openai import OpenAIPolicy, openai_agent

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def python() -> Path:
    """The server venv's python, made by scripts/setup_server.sh when this machine has none yet (~10 s)."""
    try:
        return server_python()
    except FileNotFoundError:
        setup = [str(REPO / "scripts" / "setup_server.sh")]
        out = subprocess.run(["bash", *setup], check=True, capture_output=True, text=True, timeout=600)
        return Path(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def server(python, tmp_path_factory):
    log = tmp_path_factory.mktemp("server") / "server.log"
    with LlamaCppServer(python=python, log_path=log) as srv:
        yield srv


def test_math_eval_through_real_server(server):
    from rlvr_gym.rollout import collect_sync

    agent = openai_agent(
        f"smollm2@{server.base_url}", temperature=0.7, max_new_tokens=64, concurrency=4, timeout_s=120, max_retries=2
    )
    episodes = collect_sync("rlvr/Math-v0", agent, tasks=3, group_size=2, concurrency=4, seed=0)
    assert len(episodes) == 6
    assert [e.error for e in episodes] == [None] * 6
    for e in episodes:
        assert e.verdict is not None and 0.0 <= e.reward <= 1.0
        turn = e.turns[0]
        assert turn.action.strip()
        assert turn.logprobs and all(lp <= 0.0 for lp in turn.logprobs)
    assert agent.policy.stats.completion_tokens > 0 and agent.policy.stats.prompt_tokens > 0
    assert agent.policy.stats.failures == 0


async def test_completions_endpoint_and_seeded_sampling(server):
    policy = OpenAIPolicy("smollm2", server.base_url, timeout_s=120)
    req = GenerationRequest(
        prompt="The capital of France is", sampling=SamplingParams(max_new_tokens=6, temperature=0.9, seed=11)
    )
    a, b = await policy.generate([req, req])  # decoded together in two parallel slots
    assert a.text and a.usage.completion_tokens == 6
    assert a.text == b.text  # same seed, same prompt: llama.cpp samples reproducibly
    chat = GenerationRequest(
        messages=[Message(role="user", content="What is 2+3? Answer briefly.")],
        sampling=SamplingParams(max_new_tokens=24, temperature=0),
    )
    (g,) = await policy.generate([chat])
    assert "5" in g.text and g.finish_reason == "stop"
    await policy.aclose()


async def test_completions_endpoint_returns_logprobs(server):
    policy = OpenAIPolicy("smollm2", server.base_url, timeout_s=120)
    req = GenerationRequest(prompt="The capital of France is", sampling=SamplingParams(max_new_tokens=6, seed=11))
    (gen,) = await policy.generate([req])
    await policy.aclose()
    assert gen.logprobs and len(gen.logprobs) == gen.usage.completion_tokens
    assert all(lp <= 0.0 for lp in gen.logprobs)


async def test_server_going_away_is_a_typed_error(python, tmp_path):
    srv = LlamaCppServer(python=python, n_threads=1, log_path=tmp_path / "log").start()
    policy = OpenAIPolicy("smollm2", srv.base_url, max_retries=1, backoff_s=0.05, timeout_s=60)
    (ok,) = await policy.generate([GenerationRequest(prompt="Hi", sampling=SamplingParams(max_new_tokens=2))])
    assert ok.usage.completion_tokens >= 1
    srv.stop()
    with pytest.raises(PolicyError) as info:
        await policy.generate([GenerationRequest(prompt="Hi", sampling=SamplingParams(max_new_tokens=2))])
    assert info.value.kind is ErrorKind.POLICY_ERROR
