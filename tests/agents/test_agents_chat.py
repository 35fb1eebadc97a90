"""ChatAgent: token-in/token-out over the real model, assistant mask, seeds, system prompts, messages mode."""

from __future__ import annotations

from rlvr_gym import Generation, Message, SamplingParams, Task, Turn
from rlvr_gym.agents.chat import ChatAgent, action_text, split_agent_options
from rlvr_gym.agents.templates import encode_chat
from rlvr_gym.agents.token_in_token_out import trajectory_from_turns
from rlvr_gym.envs.tools.parsing import parse_tool_calls

TASK = Task(id="t", prompt="unused")


class RecordingPolicy:
    """A policy double without a tokenizer (like an HTTP backend): records requests, answers canned text."""

    def __init__(self, reply="ok"):
        self.reply = reply
        self.requests = []

    async def generate(self, requests):
        self.requests.extend(requests)
        return [Generation(text=self.reply) for _ in requests]


async def test_two_turns_token_in_token_out(hf_policy):
    agent = ChatAgent(hf_policy, sampling=SamplingParams(temperature=0, max_new_tokens=12))
    ctx = agent.start(TASK, seed=0)
    first = [Message(role="user", content="What is 2+3? Answer briefly.")]
    second = [Message(role="user", content="And 4+4?")]
    s1 = await agent.act(ctx, first)
    assert s1.generation.finish_reason == "stop"  # ended with <|im_end|>, sampled by the model
    s2 = await agent.act(ctx, second)
    g1, g2 = s1.generation, s2.generation
    # the second prompt extends the first prompt + the sampled ids exactly
    assert g2.prompt_token_ids[: len(g1.prompt_token_ids) + len(g1.token_ids)] == g1.prompt_token_ids + g1.token_ids
    # ... and, since turn 1 ended cleanly, equals what the chat template renders for the whole conversation
    history = [*first, Message(role="assistant", content=g1.text), *second]
    assert g2.prompt_token_ids == encode_chat(hf_policy.tokenizer, history)
    tr = agent.trajectory(ctx)
    assert tr.token_ids == g2.prompt_token_ids + g2.token_ids
    assert len(tr.assistant_mask) == len(tr.token_ids) == len(tr.logprobs)
    assert sum(tr.assistant_mask) == len(g1.token_ids) + len(g2.token_ids)
    sampled = [t for t, m in zip(tr.token_ids, tr.assistant_mask, strict=True) if m]
    assert sampled == g1.token_ids + g2.token_ids
    assert [lp for lp, m in zip(tr.logprobs, tr.assistant_mask, strict=True) if m] == g1.logprobs + g2.logprobs
    # the trainer can rebuild the same from the recorded turns alone
    turns = [Turn(index=i, observation=[], action=g.text, prompt_token_ids=g.prompt_token_ids, token_ids=g.token_ids,
                  logprobs=g.logprobs) for i, g in enumerate([g1, g2])]
    assert trajectory_from_turns(turns).as_dict() == tr.as_dict()


async def test_truncated_turn_gets_template_end_of_turn(hf_policy):
    agent = ChatAgent(hf_policy, sampling=SamplingParams(temperature=0, max_new_tokens=3))
    ctx = agent.start(TASK, seed=0)
    s1 = await agent.act(ctx, [Message(role="user", content="Write a long poem about the sea.")])
    assert s1.generation.finish_reason == "length"
    s2 = await agent.act(ctx, [Message(role="user", content="Go on.")])
    g1, g2 = s1.generation, s2.generation
    glue = g2.prompt_token_ids[len(g1.prompt_token_ids) + len(g1.token_ids):]
    assert hf_policy.tokenizer.decode(glue).startswith("<|im_end|>\n<|im_start|>user\nGo on.")
    tr = agent.trajectory(ctx)
    assert sum(tr.assistant_mask) == 6  # the template's <|im_end|> is not counted as sampled


async def test_per_episode_seeds_are_derived_and_forwarded():
    policy = RecordingPolicy()
    agent = ChatAgent(policy, sampling=SamplingParams(seed=123))
    seeds = []
    for seed, sample in [(5, 0), (5, 0), (5, 1), (6, 0), (None, 0)]:
        ctx = agent.start(TASK, seed=seed, sample_index=sample)
        await agent.act(ctx, [Message(role="user", content="q")])
        await agent.act(ctx, [Message(role="user", content="q2")])
        seeds.append((policy.requests[-2].sampling.seed, policy.requests[-1].sampling.seed))
    assert seeds[0] == seeds[1]  # same episode seed -> same sampling seeds
    assert len({s for pair in seeds[1:] for s in pair}) == 8  # per sample, per turn, per episode distinct
    assert all(s is not None for pair in seeds for s in pair)  # falls back to the agent seed
    unseeded = ChatAgent(policy)
    await unseeded.act(unseeded.start(TASK), [Message(role="user", content="q")])
    assert policy.requests[-1].sampling.seed is None


async def test_messages_mode_sends_history_and_system_prompt():
    policy = RecordingPolicy(reply="four")
    agent = ChatAgent(policy, system_prompt="Be brief.")
    assert agent.token_in_token_out is False
    ctx = agent.start(TASK, seed=1)
    await agent.act(ctx, [Message(role="system", content="Env rules."), Message(role="user", content="2+2?")])
    await agent.act(ctx, [Message(role="user", content="sure?")])
    sent = policy.requests[-1].messages
    assert [m.role for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[0].content == "Be brief.\n\nEnv rules." and sent[2].content == "four"
    assert policy.requests[-1].prompt_token_ids is None


async def test_tools_from_task_metadata_are_sent():
    policy = RecordingPolicy()
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    agent = ChatAgent(policy)
    await agent.act(agent.start(Task(id="t", prompt="x", metadata={"tools": tools})), [Message(role="user", content="q")])
    assert policy.requests[-1].tools == tools


def test_action_text_and_options():
    from rlvr_gym import ToolCall

    gen = Generation(text="Let me check.", tool_calls=[ToolCall(id="1", name="f", arguments='{"x": 1}')])
    text = action_text(gen)
    assert text.startswith("Let me check.\n<tool_call>") and text.endswith("</tool_call>")
    parsed = parse_tool_calls(text)
    assert [(c.name, c.arguments) for c in parsed.calls] == [("f", '{"x": 1}')] and not parsed.errors
    assert action_text(Generation(text="plain")) == "plain"
    agent_opts, rest = split_agent_options({"temperature": 0.3, "seed": None, "concurrency": 4, "dtype": "float32"})
    assert agent_opts["sampling"].temperature == 0.3 and agent_opts["concurrency"] == 4 and rest == {"dtype": "float32"}


async def test_smollm2_spec_through_make_agent():
    import rlvr_gym

    agent = rlvr_gym.make_agent("smollm2", temperature=0.0, max_new_tokens=4, seed=0, concurrency=2,
                                api_key_env="X", timeout_s=3, max_retries=1)
    assert agent.name == "smollm2" and agent.token_in_token_out and agent.policy.batcher.max_batch_size == 2
    step = await agent.act(agent.start(TASK, seed=0), [Message(role="user", content="Hi")])
    assert step.generation.token_ids and len(step.generation.token_ids) <= 4
