"""vLLM backend: lazy import with a clear error on machines without vLLM; `vllm serve` through the OpenAI policy."""

from __future__ import annotations

import importlib.util

import pytest

from rlvr_gym import Message, Task
from rlvr_gym.agents import vllm as vllm_backend


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vLLM is installed here")
def test_in_process_engine_fails_clearly_without_vllm(smollm2_dir):
    with pytest.raises(RuntimeError, match="rlvr-gym\\[vllm\\]"):
        vllm_backend.vllm_agent(str(smollm2_dir), temperature=0.0)


def test_make_agent_spec_routes_to_the_backend():
    import rlvr_gym

    if importlib.util.find_spec("vllm") is None:
        with pytest.raises(RuntimeError, match="needs vLLM"):
            rlvr_gym.make_agent("vllm:smollm2")


async def test_vllm_serve_token_in_token_out_over_completions(fake_server, smollm2_dir):
    agent = vllm_backend.vllm_agent(f"m@{fake_server.url}", tokenizer=str(smollm2_dir), max_new_tokens=3,
                                    temperature=0.0, max_retries=1)
    assert agent.token_in_token_out
    ctx = agent.start(Task(id="t", prompt="x"), seed=0)
    s1 = await agent.act(ctx, [Message(role="user", content="2+2?")])
    s2 = await agent.act(ctx, [Message(role="user", content="sure?")])
    (p1, b1), (p2, b2) = fake_server.requests
    assert p1 == p2 == "/v1/completions" and b1["return_token_ids"] is True
    assert isinstance(b1["prompt"], list) and b2["prompt"][: len(b1["prompt"]) + 3] == b1["prompt"] + [5, 6, 7]
    assert s1.generation.token_ids == [5, 6, 7] and s2.generation.prompt_token_ids == b2["prompt"]
    assert sum(agent.trajectory(ctx).assistant_mask) == 6
    await agent.aclose()
