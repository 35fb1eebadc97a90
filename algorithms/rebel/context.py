"""The agent context of ReBel (docs/alfworld.md): each turn the policy sees only the env's latest message.

ReBel never replays raw history: the prompt holds the previous cumulative belief (`<belief_prev>`), the last 2
actions, the current observation and the admissible actions, all of which the env writes into every turn's message
(ALFWorld's `prompt_style: rebel`). A `ChatAgent` would prepend the whole conversation; `CurrentTurnAgent` keeps
it (for logs) but prompts with the system prompt and the latest message alone, so the prompt's length does not
grow with the episode. Each turn's prompt then starts a new token row in training (`batch.episode_rows`).
"""

from __future__ import annotations

from rlvr_gym import AgentStep, EpisodeContext, GenerationRequest, Message
from rlvr_gym.agents.chat import ChatAgent, action_text
from rlvr_gym.agents.templates import encode_chat


class CurrentTurnAgent(ChatAgent):
    """A ChatAgent whose prompt is [system prompt] + this turn's observation only (`rollout.context: current`)."""

    name = "chat-current"

    async def act(self, ctx: EpisodeContext, observation: list[Message]) -> AgentStep:
        turn = int(ctx.state.get("turns", 0))
        prompt = list(observation)
        if self.system_prompt:
            prompt = [Message(role="system", content=self.system_prompt), *prompt]
        tools = self.tools if self.tools is not None else ctx.task.metadata.get("tools")
        request = GenerationRequest(tools=tools, sampling=self._sampling(ctx, turn))
        if self.token_in_token_out:
            request.prompt_token_ids = encode_chat(self.tokenizer, prompt, tools=tools)
        else:
            request.messages = prompt
        generation = (await self.policy.generate([request]))[0]
        ctx.messages.extend(observation)
        ctx.messages.append(Message(role="assistant", content=generation.text, tool_calls=generation.tool_calls))
        ctx.state["turns"] = turn + 1
        return AgentStep(text=action_text(generation), generation=generation)
