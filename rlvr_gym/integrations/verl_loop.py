"""verl's agent loop over any rlvr-gym env (`agent_name: rlvr_gym`; needs verl, see scripts/setup_verl.sh).

One rollout = one env episode: the env's opening messages are tokenized with verl's Continuous Token builder, the
model's tokens are appended with mask 1 (and their log-probs), each env reply is appended as a user turn with mask
0, until the env ends the episode or `rollout.response_length` is used up. The model writes the env's own action
text (no function-calling schema): the env's parser and verifier judge it exactly as in `rlvr-gym eval`.
`reward_score` is the env's verdict (its truncation verdict when the length budget ended the episode), so verl
skips its reward loop for these rows; nothing in the row can set it. Env exceptions propagate (an infrastructure
failure is not a reward of 0).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any
from uuid import uuid4

from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput, register

from .episode import EnvSession, text_messages
from .verl import AGENT_NAME, env_kwargs_of


@register(AGENT_NAME)
class RlvrGymAgentLoop(AgentLoopBase):
    """reset -> (generate -> step)* on an `EnvSession`; see the module docstring."""

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        info = dict(kwargs.get("extra_info") or {})
        if not info.get("env_id"):
            raise ValueError("extra_info.env_id is missing: build the dataset with rlvr_gym.integrations.verl")
        session = await asyncio.to_thread(EnvSession, str(info["env_id"]), env_kwargs_of(info))
        try:
            return await self._episode(session, info, sampling_params)
        finally:
            session.close()

    async def _episode(self, session: EnvSession, info: dict[str, Any], sampling: dict[str, Any]) -> AgentLoopOutput:
        budget = int(self.rollout_config.response_length)
        max_turns = self.rollout_config.multi_turn.get("max_assistant_turns") or None
        messages = await asyncio.to_thread(
            session.reset, task_index=info.get("task_index"), seed=info.get("seed"), task_id=info.get("task_id")
        )
        tokens = await self.ct_build_initial_tokens(messages)
        prompt_length = len(tokens)
        mask: list[int] = []
        logprobs: list[float] | None = None
        request_id, turns, generate_s, env_s = uuid4().hex, 0, 0.0, 0.0
        while True:
            t0 = time.perf_counter()
            out = await self.server_manager.generate(request_id=request_id, prompt_ids=tokens, sampling_params=sampling)
            generate_s += time.perf_counter() - t0
            merged, mask, logprobs = await self.ct_merge_assistant_token(
                tokens, out.token_ids, mask, logprobs if logprobs is not None else ([] if out.log_probs else None),
                assistant_logprobs=out.log_probs or None,
            )
            tokens, turns = merged.token_ids, turns + 1
            text = self.tokenizer.decode(out.token_ids, skip_special_tokens=True)
            t0 = time.perf_counter()
            result = await asyncio.to_thread(session.act, text)
            env_s += time.perf_counter() - t0
            if session.done or len(mask) >= budget or (max_turns and turns >= max_turns):
                break
            before = [*messages, {"role": "assistant", "content": text}]
            messages = before + text_messages(result.observation)
            merged, new_mask, new_logprobs = await self.ct_merge_context_msg(before, messages, tokens, mask, logprobs)
            if len(new_mask) >= budget:
                break
            tokens, mask, logprobs = merged.token_ids, new_mask, new_logprobs
        verdict = session.final_verdict()
        response = tokens[prompt_length:]
        return AgentLoopOutput(
            prompt_ids=tokens[:prompt_length],
            response_ids=response[:budget],
            response_mask=mask[:budget],
            response_logprobs=logprobs[:budget] if logprobs else None,
            reward_score=float(verdict.reward) if verdict is not None else None,
            num_turns=len(messages) + 1,
            metrics={"generate_sequences": generate_s, "tool_calls": env_s},
            extra_fields={
                "turn_scores": [],
                "tool_rewards": [],
                "rlvr_passed": bool(verdict.passed) if verdict is not None else False,
                "rlvr_components": dict(verdict.components) if verdict is not None else {},
                "rlvr_truncated": not session.done,
            },
        )
