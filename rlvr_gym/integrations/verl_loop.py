"""verl's agent loop over any rlvr-gym env (`agent_name: rlvr_gym`; needs verl, see scripts/setup_verl.sh).

One rollout = one env episode: the env's opening messages are tokenized with verl's Continuous Token builder, the
model's tokens are appended with mask 1 (and their log-probs), each env reply is appended as a user turn with mask
0, until the env ends the episode, a turn limit is reached or `rollout.response_length` is used up. Each generation
is capped at the response budget left (`max_tokens`), and the env steps on exactly the tokens kept, so the text the
env judged is the text verl trains on. The model writes the env's own action text (no function-calling schema):
the env's parser and verifier judge it exactly as in `rlvr-gym eval`.
`reward_score` is the env's verdict (its truncation verdict when a limit ended the episode), so verl skips its
reward loop for these rows; nothing in the row can set it. Env exceptions propagate (an infrastructure failure is
not a reward of 0).
"""

from __future__ import annotations

import asyncio
import atexit
import json
import threading
import time
from typing import Any
from uuid import uuid4

try:
    from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput, register
except ImportError as exc:  # verl's pins clash with the main venv, so it normally lives in ./.venv-verl
    raise ImportError(
        f"rlvr_gym.integrations.verl_loop needs verl 0.9 ({exc}); its pins clash with rlvr-gym's main venv, so "
        "run `bash scripts/setup_verl.sh` and use ./.venv-verl/bin/python"
    ) from exc

from .episode import EnvSession, text_messages
from .verl import AGENT_NAME, env_kwargs_of

__all__ = ["RlvrGymAgentLoop"]

MAX_IDLE_SESSIONS = 256  # per env id and options, per worker process
_idle: dict[str, list[EnvSession]] = {}
_idle_lock = threading.Lock()


def _take_session(env_id: str, env_kwargs: dict[str, Any]) -> tuple[str, EnvSession]:
    """An idle session of this env, else a new one: verl builds one loop per rollout, and `make` can take 0.5 s."""
    key = json.dumps([env_id, env_kwargs], sort_keys=True)
    with _idle_lock:
        pool = _idle.get(key)
        if pool:
            return key, pool.pop()
    return key, EnvSession(env_id, env_kwargs)


def _give_back(key: str, session: EnvSession) -> None:
    with _idle_lock:
        pool = _idle.setdefault(key, [])
        if len(pool) < MAX_IDLE_SESSIONS:
            pool.append(session)
            return
    session.close()


@atexit.register
def _close_idle() -> None:
    with _idle_lock:
        sessions = [s for pool in _idle.values() for s in pool]
        _idle.clear()
    for session in sessions:
        session.close()


@register(AGENT_NAME)
class RlvrGymAgentLoop(AgentLoopBase):
    """reset -> (generate -> step)* on an `EnvSession`; see the module docstring."""

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        info = dict(kwargs.get("extra_info") or {})
        if not info.get("env_id"):
            raise ValueError("extra_info.env_id is missing: build the dataset with rlvr_gym.integrations.verl")
        key, session = await asyncio.to_thread(_take_session, str(info["env_id"]), env_kwargs_of(info))
        try:
            output = await self._episode(session, info, sampling_params)
        except BaseException:
            await asyncio.to_thread(session.close)  # a session that failed mid-episode is not reused
            raise
        _give_back(key, session)
        return output

    async def _episode(self, session: EnvSession, info: dict[str, Any], sampling: dict[str, Any]) -> AgentLoopOutput:
        budget = int(self.rollout_config.response_length)
        multi_turn = self.rollout_config.multi_turn
        max_assistant_turns = multi_turn.get("max_assistant_turns") or None
        max_user_turns = multi_turn.get("max_user_turns") or None
        sampling = dict(sampling)
        caps = [sampling.pop(k, None) for k in ("max_tokens", "max_new_tokens")]  # vLLM's and SGLang's names
        cap = min((int(c) for c in caps if c), default=None)
        messages = await asyncio.to_thread(
            session.reset, task_index=info.get("task_index"), seed=info.get("seed"), task_id=info.get("task_id")
        )
        tokens = await self.ct_build_initial_tokens(messages)
        prompt_length = len(tokens)
        mask: list[int] = []
        logprobs: list[float] | None = None
        request_id, assistant_turns, env_turns = uuid4().hex, 0, 0
        metrics: dict[str, Any] = {"generate_sequences": 0.0, "tool_calls": 0.0, "num_preempted": -1}
        extra: dict[str, Any] = {}
        while True:
            room = budget - len(mask)
            params = {**sampling, "max_tokens": min(room, cap) if cap else room}
            t0 = time.perf_counter()
            out = await self.server_manager.generate(request_id=request_id, prompt_ids=tokens, sampling_params=params)
            metrics["generate_sequences"] += time.perf_counter() - t0
            if out.num_preempted is not None:
                metrics["num_preempted"] = max(metrics["num_preempted"], 0) + out.num_preempted
            _merge_server_fields(extra, out.extra_fields)
            ids = list(out.token_ids)[:room]  # a server that ignores max_tokens is cut here, before the env sees it
            ids_logprobs = list(out.log_probs)[:room] if out.log_probs else None
            prior = logprobs if logprobs is not None else ([] if ids_logprobs is not None else None)
            merged, mask, logprobs = await self.ct_merge_assistant_token(
                tokens, ids, mask, prior, assistant_logprobs=ids_logprobs
            )
            tokens, assistant_turns = merged.token_ids, assistant_turns + 1
            text = self.tokenizer.decode(ids, skip_special_tokens=True)
            t0 = time.perf_counter()
            result = await asyncio.to_thread(session.act, text)
            metrics["tool_calls"] += time.perf_counter() - t0
            if (
                session.done
                or len(mask) >= budget
                or (max_assistant_turns and assistant_turns >= max_assistant_turns)
                or (max_user_turns and env_turns >= max_user_turns)
            ):
                break
            before = [*messages, {"role": "assistant", "content": text}]
            after = before + (text_messages(result.observation) or [{"role": "user", "content": "(no output)"}])
            merged, new_mask, new_logprobs = await self.ct_merge_context_msg(before, after, tokens, mask, logprobs)
            if len(new_mask) >= budget:  # the env's reply does not fit: the episode is cut here
                break
            tokens, mask, logprobs, messages, env_turns = merged.token_ids, new_mask, new_logprobs, after, env_turns + 1
        verdict = session.final_verdict()
        return AgentLoopOutput(
            prompt_ids=tokens[:prompt_length],
            response_ids=tokens[prompt_length:][:budget],
            response_mask=mask[:budget],
            response_logprobs=logprobs[:budget] if logprobs else None,
            reward_score=float(verdict.reward) if verdict is not None else None,
            num_turns=assistant_turns + env_turns + 1,  # as verl's ToolAgentLoop counts: the prompt, then each turn
            metrics=metrics,
            extra_fields={
                **extra,
                "turn_scores": [],
                "tool_rewards": [],
                "rlvr_passed": bool(verdict.passed) if verdict is not None else False,
                "rlvr_components": dict(verdict.components) if verdict is not None else {},
                "rlvr_truncated": not session.done,
            },
        )


def _merge_server_fields(extra: dict[str, Any], fields: dict[str, Any]) -> None:
    """Keep the server's extra fields as ToolAgentLoop does (fully async training reads min/max_global_steps)."""
    if not extra:
        extra.update(fields)
    elif fields.get("max_global_steps"):
        extra["max_global_steps"] = fields["max_global_steps"]
