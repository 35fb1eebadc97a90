"""OpenAI-compatible policy against a scripted fake server: retries, typed errors, logprobs, tools, concurrency."""

from __future__ import annotations

import asyncio
import socket
import time

import pytest

from rlvr_gym import ErrorKind, GenerationRequest, Message, PolicyError, SamplingParams
from rlvr_gym.agents.openai import OpenAIPolicy, normalize_base_url, openai_agent, split_model_url
from rlvr_gym.envs.tools.parsing import parse_tool_calls

CHAT = GenerationRequest(messages=[Message(role="user", content="2+2?")], sampling=SamplingParams(max_new_tokens=8))


def policy(server, **kw) -> OpenAIPolicy:
    kw.setdefault("backoff_s", 0.01)
    kw.setdefault("max_retries", 3)
    kw.setdefault("timeout_s", 2.0)
    return OpenAIPolicy("m", server.url, api_key="sk-test", **kw)


async def test_ok_chat_parses_text_logprobs_usage(fake_server):
    p = policy(fake_server)
    (gen,) = await p.generate([CHAT])
    assert gen.text == "The answer is \\boxed{4}." and gen.finish_reason == "stop"
    assert gen.logprobs == [-0.5, -0.25, -0.125]
    assert gen.usage.prompt_tokens == 11 and gen.usage.completion_tokens == 3
    path, body = fake_server.requests[0]
    assert path == "/v1/chat/completions"
    assert body["model"] == "m" and body["max_tokens"] == 8 and body["logprobs"] is True
    assert p.stats.requests == 1 and p.stats.completion_tokens == 3
    await p.aclose()


@pytest.mark.parametrize(
    "failure", [("status", 429), ("status", 500), ("status", 503), "malformed", "drop", "empty", ("sleep", 3.0)]
)
async def test_transient_failures_are_retried(fake_server, failure):
    fake_server.script = [failure, failure]
    p = policy(fake_server, timeout_s=1.0)
    (gen,) = await p.generate([CHAT])
    assert gen.text.startswith("The answer")
    assert p.stats.retries == 2 and p.stats.requests == 3 and p.stats.failures == 0


async def test_retry_after_header_is_honoured(fake_server):
    fake_server.script = [("status", 429, {"Retry-After": "0.4"})]
    p = policy(fake_server, backoff_s=0.0)
    t0 = time.perf_counter()
    await p.generate([CHAT])
    assert time.perf_counter() - t0 >= 0.35


async def test_exponential_backoff_grows(fake_server):
    fake_server.script = [("status", 500)] * 3
    p = policy(fake_server, backoff_s=0.1, max_retries=3)
    t0 = time.perf_counter()
    await p.generate([CHAT])
    # delays: ~[0.05..0.1] + [0.1..0.2] + [0.2..0.4]
    assert 0.35 <= time.perf_counter() - t0 < 3.0


async def test_persistent_5xx_becomes_typed_policy_error(fake_server):
    fake_server.script = [("status", 503)] * 10
    p = policy(fake_server, max_retries=2)
    with pytest.raises(PolicyError) as info:
        await p.generate([CHAT])
    assert info.value.kind is ErrorKind.POLICY_ERROR and info.value.status == 503
    assert len(fake_server.requests) == 3 and p.stats.failures == 1


async def test_persistent_timeout_becomes_generation_timeout(fake_server):
    fake_server.script = [("sleep", 2.0)] * 3
    p = policy(fake_server, max_retries=1, timeout_s=0.5)
    with pytest.raises(PolicyError) as info:
        await p.generate([CHAT])
    assert info.value.kind is ErrorKind.GENERATION_TIMEOUT


async def test_client_errors_are_not_retried(fake_server):
    fake_server.script = [("status", 401)]
    p = policy(fake_server)
    with pytest.raises(PolicyError) as info:
        await p.generate([CHAT])
    assert info.value.status == 401 and len(fake_server.requests) == 1


async def test_connection_refused_is_a_policy_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = OpenAIPolicy("m", f"http://127.0.0.1:{port}", max_retries=1, backoff_s=0.01)
    with pytest.raises(PolicyError) as info:
        await p.generate([CHAT])
    assert info.value.kind is ErrorKind.POLICY_ERROR and "connection error" in str(info.value)


async def test_server_without_logprobs_is_asked_again_without(fake_server):
    fake_server.script = ["reject_logprobs", "reject_logprobs"]
    p = policy(fake_server)
    (gen,) = await p.generate([CHAT])
    assert gen.logprobs is None and p.request_logprobs is False
    assert "logprobs" not in fake_server.requests[-1][1]
    await p.generate([CHAT])
    assert len(fake_server.requests) == 3  # the second call no longer sends logprobs


async def test_completions_with_prompt_ids_and_token_ids(fake_server):
    p = policy(fake_server, return_token_ids=True)
    req = GenerationRequest(prompt_token_ids=[1, 2, 3], sampling=SamplingParams(max_new_tokens=3, seed=5, stop=["\n"]))
    (gen,) = await p.generate([req])
    path, body = fake_server.requests[0]
    assert path == "/v1/completions" and body["prompt"] == [1, 2, 3] and body["seed"] == 5 and body["stop"] == ["\n"]
    assert gen.token_ids == [5, 6, 7] and gen.prompt_token_ids == [1, 2, 3] and gen.logprobs == [-0.5, -0.25, -0.125]


async def test_concurrency_limit_holds(fake_server):
    fake_server.script = [("sleep", 0.3)] * 6
    p = policy(fake_server, concurrency=2)
    await p.generate([CHAT] * 6)
    assert fake_server.max_inflight == 2


async def test_structured_tool_calls_become_hermes_text(fake_server):
    fake_server.script = [("tool", "get_weather", '{"city": "Paris"}')]
    agent = openai_agent(f"m@{fake_server.url}", max_new_tokens=16, temperature=0.0)
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
    agent.tools = tools
    ctx = agent.start(task=_task(), seed=1)
    step = await agent.act(ctx, [Message(role="user", content="Weather in Paris?")])
    parsed = parse_tool_calls(step.text, tools)
    assert [(c.name, c.arguments) for c in parsed.calls] == [("get_weather", '{"city": "Paris"}')]
    assert fake_server.requests[0][1]["tools"] == tools
    assert ctx.messages[-1].tool_calls[0].name == "get_weather"
    # the next turn sends the structured call back in OpenAI wire format
    await agent.act(ctx, [Message(role="tool", content="sunny", tool_call_id="call_1")])
    sent = fake_server.requests[1][1]["messages"]
    assert sent[1]["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    assert sent[2] == {"role": "tool", "content": "sunny", "tool_call_id": "call_1"}
    await agent.aclose()


def test_spec_parsing(monkeypatch):
    assert split_model_url("gpt-4o@https://api.openai.com/v1") == ("gpt-4o", "https://api.openai.com/v1")
    assert split_model_url("org/m@x@http://u:p@h:1/v1") == ("org/m@x", "http://u:p@h:1/v1")
    assert normalize_base_url("http://127.0.0.1:8000/") == "http://127.0.0.1:8000/v1"
    assert normalize_base_url("http://h/api/v1/") == "http://h/api/v1"
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ValueError):
        split_model_url("gpt-4o")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://h:1")
    assert split_model_url("gpt-4o") == ("gpt-4o", "http://h:1")


def test_api_key_from_env_var(monkeypatch):
    monkeypatch.setenv("MY_KEY", "sk-abc")
    agent = openai_agent("m@http://127.0.0.1:9", api_key_env="MY_KEY", concurrency=3, timeout_s=5, max_retries=1,
                         seed=0, system_prompt="Be brief.", temperature=0.2)
    assert agent.policy.api_key == "sk-abc" and agent.policy.concurrency == 3 and agent.policy.max_retries == 1
    assert agent.system_prompt == "Be brief." and agent.sampling.temperature == 0.2


@pytest.mark.parametrize("exhaust", [False, True])
def test_flaky_server_loses_no_episode(fake_server, exhaust):
    """Through the real rollout runner on the math env: every episode is recorded, failures are typed.

    Sequential (concurrency 1) so the script maps to episodes: without exhaustion every failure is followed by a
    success and all episodes finish; with it, two episodes run out of retries and carry a policy_error.
    """
    from rlvr_gym.rollout import collect_sync

    if exhaust:
        fake_server.script = [("status", 500), "drop", ("status", 429)] + [("status", 503)] * 3
    else:
        fake_server.script = [("status", 500), "ok", "drop", "ok", ("status", 429), "malformed"]
    agent = openai_agent(f"m@{fake_server.url}", max_retries=2, timeout_s=2, max_new_tokens=16, concurrency=1)
    agent.policy.backoff_s = 0.01
    episodes = collect_sync("rlvr/Math-v0", agent, tasks=4, group_size=2, concurrency=1, seed=0)
    assert len(episodes) == 8 and len({e.episode_id for e in episodes}) == 8
    failed = [e for e in episodes if e.error is not None]
    assert len(failed) == (2 if exhaust else 0)
    assert all(e.error.kind is ErrorKind.POLICY_ERROR and e.error.turn == 0 for e in failed)
    assert all(e.verdict is not None and e.turns for e in episodes if e.error is None)
    assert agent.policy.stats.retries == 4


def _task():
    from rlvr_gym import Task

    return Task(id="t", prompt="x")


async def test_new_event_loop_gets_a_fresh_client(fake_server):
    p = policy(fake_server)
    await p.generate([CHAT])
    await asyncio.to_thread(lambda: asyncio.run(p.generate([CHAT])))
    assert len(fake_server.requests) == 2
