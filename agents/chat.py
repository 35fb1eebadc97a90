"""ChatAgent: the generic model agent over any Policy (HF, vLLM, OpenAI-compatible).

Per episode it keeps the conversation in the `EpisodeContext`. With a tokenizer-backed policy (HF, in-process vLLM)
it works token-in/token-out (see `token_in_token_out`): after the first turn the prompt is the exact previous tokens plus the
template delta of the new observation, and `ctx.state["trajectory"]` holds the token ids, the assistant mask and
the logprobs. With an HTTP policy (no tokenizer) it sends the messages.

Structured tool calls returned by OpenAI-style servers are serialised into the action text as Hermes
`<tool_call>{json}</tool_call>` blocks, because envs parse actions from text.
"""

from __future__ import annotations

from typing import Any

from rlvr_gym import Agent, AgentStep, EpisodeContext, Generation, GenerationRequest, Message, SamplingParams
from rlvr_gym.family import stable_seed
from rlvr_gym.tool_markup import format_tool_calls

from .templates import encode_chat
from .token_in_token_out import TokenTrajectory, next_prompt_ids

SAMPLING_OPTIONS = tuple(SamplingParams.model_fields)


def split_agent_options(options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split factory options into ChatAgent kwargs (sampling, system_prompt, tools, concurrency) and the rest."""
    rest = dict(options)
    sampling = {k: rest.pop(k) for k in SAMPLING_OPTIONS if k in rest}
    agent: dict[str, Any] = {"sampling": SamplingParams(**{k: v for k, v in sampling.items() if v is not None})}
    for key in ("system_prompt", "tools", "concurrency"):
        if key in rest:
            agent[key] = rest.pop(key)
    return agent, rest


class ChatAgent(Agent):
    """Chat agent over a Policy; token-in/token-out whenever the policy exposes a tokenizer."""

    name = "chat"

    def __init__(
        self,
        policy: Any,
        *,
        system_prompt: str | None = None,
        sampling: SamplingParams | None = None,
        tools: list[dict[str, Any]] | None = None,
        token_in_token_out: bool | None = None,
    ) -> None:
        self.policy = policy
        self.system_prompt = system_prompt
        self.sampling = sampling or SamplingParams()
        self.tools = tools
        self.tokenizer = getattr(policy, "tokenizer", None)
        self.token_in_token_out = self.tokenizer is not None if token_in_token_out is None else token_in_token_out
        if self.token_in_token_out and self.tokenizer is None:
            raise ValueError("token-in/token-out needs a policy with a tokenizer")

    async def act(self, ctx: EpisodeContext, observation: list[Message]) -> AgentStep:
        turn = int(ctx.state.get("turns", 0))
        incoming = self._incoming(ctx, observation)
        tools = self.tools if self.tools is not None else ctx.task.metadata.get("tools")
        request = GenerationRequest(tools=tools, sampling=self._sampling(ctx, turn))
        if self.token_in_token_out:
            request.prompt_token_ids = self._prompt_ids(ctx, incoming, tools)
        else:
            request.messages = [*ctx.messages, *incoming]
        generation = (await self.policy.generate([request]))[0]
        ctx.messages.extend(incoming)
        ctx.messages.append(Message(role="assistant", content=generation.text, tool_calls=generation.tool_calls))
        if self.token_in_token_out:
            self._record_tokens(ctx, generation)
        ctx.state["turns"] = turn + 1
        return AgentStep(text=action_text(generation), generation=generation)

    def trajectory(self, ctx: EpisodeContext) -> TokenTrajectory | None:
        """The episode's token ids, assistant mask and logprobs so far (token-in/token-out mode only)."""
        return ctx.state.get("trajectory")

    async def aclose(self) -> None:
        close = getattr(self.policy, "aclose", None)
        if close is not None:
            await close()

    # ---- internals -----------------------------------------------------------------------------------------------
    def _incoming(self, ctx: EpisodeContext, observation: list[Message]) -> list[Message]:
        """This turn's new messages; the first turn gets the agent's system prompt (merged with an env one)."""
        incoming = list(observation)
        if ctx.messages or not self.system_prompt:
            return incoming
        if incoming and incoming[0].role == "system":
            merged = f"{self.system_prompt}\n\n{incoming[0].text()}"
            return [Message(role="system", content=merged), *incoming[1:]]
        return [Message(role="system", content=self.system_prompt), *incoming]

    def _sampling(self, ctx: EpisodeContext, turn: int) -> SamplingParams:
        """Per-turn seed from the episode seed (or the agent seed), sample index and turn: reproducible episodes."""
        base = ctx.seed if ctx.seed is not None else self.sampling.seed
        seed = None if base is None else stable_seed(base, ctx.sample_index, turn, bits=31)
        return self.sampling.model_copy(update={"seed": seed})

    def _prompt_ids(self, ctx: EpisodeContext, incoming: list[Message], tools: Any) -> list[int]:
        trajectory: TokenTrajectory | None = ctx.state.get("trajectory")
        if trajectory is None or not ctx.messages:
            return encode_chat(self.tokenizer, incoming, tools=tools)
        ids = next_prompt_ids(
            self.tokenizer,
            trajectory.token_ids,
            ctx.messages,
            incoming,
            ended_with=ctx.state.get("ended_with"),
            tools=tools,
        )
        if ids is None:
            # The template rewrites earlier turns (e.g. drops old reasoning): restart the sequence from a re-render.
            ctx.state.setdefault("retokenized_turns", []).append(int(ctx.state.get("turns", 0)))
            ctx.state["trajectory"] = TokenTrajectory()
            return encode_chat(self.tokenizer, [*ctx.messages, *incoming], tools=tools)
        return ids

    def _record_tokens(self, ctx: EpisodeContext, generation: Generation) -> None:
        if generation.prompt_token_ids is None or generation.token_ids is None:
            raise ValueError("token-in/token-out policy returned no token ids")
        trajectory: TokenTrajectory = ctx.state.setdefault("trajectory", TokenTrajectory())
        trajectory.extend(generation.prompt_token_ids, generation.token_ids, generation.logprobs)
        last = generation.token_ids[-1] if generation.token_ids else None
        eos_ids = getattr(self.policy, "eos_ids", None) or {self.tokenizer.eos_token_id}
        ctx.state["ended_with"] = self.tokenizer.decode([last]) if last in eos_ids else None


def action_text(generation: Generation) -> str:
    """The env-facing action: the generated text plus any structured tool calls in Hermes markup."""
    if not generation.tool_calls:
        return generation.text
    calls = format_tool_calls(generation.tool_calls)
    return f"{generation.text}\n{calls}" if generation.text else calls
