"""Env sessions behind the server: one env instance per session, with caps, idle expiry, reset rate and timeouts.

Everything a session sends back is built here, so the rule "verifier secrets never leave the server" lives in one
place: observations carry the task's agent view (id, prompt, public metadata) and the verdict's reward, pass,
validity and components — never `ground_truth`, `reference_actions` or the verifier's internals.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from ..env import Env, StepResult
from ..http_guard import RateLimiter, RequestRefused
from ..registry import make


class SessionError(RequestRefused):
    """A request the server refuses; `code` follows OpenEnv's error codes, `status` the HTTP status."""

    def __init__(self, code: str, message: str, status: int = 400, retry_after_s: float | None = None) -> None:
        super().__init__(status, code, message, retry_after_s)


@dataclass(frozen=True)
class SessionLimits:
    """Bounds that keep one noisy client from exhausting the server (docs/serving.md).

    Sessions held by a live WebSocket are never taken away; sessions opened over plain HTTP (or MCP) that sat
    idle for `reclaim_idle_s` are closed to make room when a cap is reached, and all sessions expire after
    `idle_s`. A client is a peer address: on loopback every local process is the same client.
    """

    max_sessions: int = 64
    per_client: int = 32
    idle_s: float = 600.0
    reclaim_idle_s: float = 30.0
    reset_rate: float = 50.0  # resets per second per client, in bursts of max(64, max_sessions)


@dataclass
class Session:
    id: str
    env: Env
    client: str = "local"
    last_used: float = field(default_factory=time.monotonic)
    steps: int = 0
    done: bool = False
    attached: bool = False  # held by a live WebSocket: never reclaimed
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


def public_verdict(result: StepResult) -> dict[str, Any] | None:
    verdict = result.verdict
    if verdict is None:
        return None
    return {"reward": verdict.reward, "passed": verdict.passed, "valid": verdict.valid,
            "components": dict(verdict.components)}


def observation_payload(session: Session, messages: list[dict[str, Any]], *, reward: float | None, done: bool,
                        valid_action: bool = True, verdict: dict[str, Any] | None = None) -> dict[str, Any]:
    """The OpenEnv reply shape `{observation, reward, done, metadata}` for one reset or step."""
    task = session.env.task
    text = "\n\n".join(m["content"] if isinstance(m.get("content"), str) else
                       "".join(p.get("text") or "" for p in m.get("content") or []) for m in messages)
    metadata: dict[str, Any] = {"session_id": session.id, "step": session.steps, "valid_action": valid_action}
    if task is not None:
        metadata["task"] = task.view().model_dump(mode="json")
    if verdict is not None:
        metadata["verdict"] = verdict
    return {"observation": {"messages": messages, "text": text, "done": done, "reward": reward,
                            "metadata": metadata},
            "reward": reward, "done": done, "metadata": metadata}


class SessionPool:
    """Sessions of one env id. Env calls run in worker threads so the event loop keeps serving other clients."""

    def __init__(self, env_id: str, env_kwargs: dict[str, Any] | None = None,
                 limits: SessionLimits | None = None) -> None:
        self.env_id = env_id
        self.env_kwargs = dict(env_kwargs or {})
        self.limits = limits or SessionLimits()
        self.max_sessions = self.limits.max_sessions
        self.resets = RateLimiter(self.limits.reset_rate, max(64, self.limits.max_sessions))
        self.sessions: dict[str, Session] = {}
        make(env_id, **self.env_kwargs).close()  # fail at start-up, not on the first client, if the env is broken

    def open(self, client: str = "local", *, attached: bool = False) -> Session:
        self.expire()
        mine = [s for s in self.sessions.values() if s.client == client]
        if len(mine) >= self.limits.per_client and not self._reclaim(mine):
            raise SessionError("CAPACITY_REACHED", f"this client already holds {len(mine)} sessions (the limit per "
                                                   "client); close some or wait for them to expire", 429, 5.0)
        if len(self.sessions) >= self.max_sessions and not self._reclaim(list(self.sessions.values())):
            raise SessionError("CAPACITY_REACHED", f"all {self.max_sessions} sessions are in use", 503, 5.0)
        try:
            env = make(self.env_id, **self.env_kwargs)
        except Exception as exc:
            raise SessionError("FACTORY_ERROR", f"could not build {self.env_id}: {exc}", 500) from exc
        session = Session(secrets.token_urlsafe(12), env, client=client, attached=attached)
        self.sessions[session.id] = session
        return session

    def _reclaim(self, candidates: list[Session]) -> bool:
        """Close the least recently used detached session idle for reclaim_idle_s, if any (True when one was)."""
        now = time.monotonic()
        idle = [s for s in candidates
                if not (s.attached or s.lock.locked()) and now - s.last_used >= self.limits.reclaim_idle_s]
        if not idle:
            return False
        self.close(min(idle, key=lambda s: s.last_used).id)
        return True

    def get(self, session_id: str) -> Session:
        self.expire()
        session = self.sessions.get(session_id)
        if session is None:
            raise SessionError("SESSION_ERROR", f"no session {session_id[:64]!r} (expired or closed)", 404)
        session.last_used = time.monotonic()
        return session

    def close(self, session_id: str) -> None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            session.env.close()

    def expire(self) -> None:
        now = time.monotonic()
        for sid in [sid for sid, s in self.sessions.items() if now - s.last_used > self.limits.idle_s]:
            self.close(sid)

    def charge_reset(self, client: str) -> None:
        """Count one reset against `client`'s rate (a 429 with the wait when it is over)."""
        wait = self.resets.wait_s(client)
        if wait:
            raise SessionError("RATE_LIMITED", f"too many resets; retry in {wait:.1f}s", 429, wait)

    async def reset(self, session: Session, data: dict[str, Any], *, charged: bool = False) -> dict[str, Any]:
        seed = data.get("seed")
        options = {k: data[k] for k in ("task_index",) if data.get(k) is not None}
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or seed < 0):
            raise SessionError("VALIDATION_ERROR", "seed must be a non-negative integer")
        if "task_index" in options and (not isinstance(options["task_index"], int)
                                        or isinstance(options["task_index"], bool)):
            raise SessionError("VALIDATION_ERROR", "task_index must be an integer")
        if not charged:
            self.charge_reset(session.client)
        async with session.lock:
            try:
                messages, _ = await self._call(session, session.env.reset, session.env.reset_timeout_s, seed=seed,
                                               options=options or None)
            except (IndexError, ValueError) as exc:
                raise SessionError("VALIDATION_ERROR", str(exc)) from exc
            session.steps, session.done = 0, False
        return observation_payload(session, messages, reward=None, done=False)

    async def step(self, session: Session, action: Any) -> dict[str, Any]:
        text = action.get("text") if isinstance(action, dict) else action
        if not isinstance(text, str):
            raise SessionError("VALIDATION_ERROR", 'the action must be {"text": "<the model output>"}')
        if session.env.task is None:
            raise SessionError("SESSION_ERROR", "reset the session before stepping", 409)
        async with session.lock:
            result: StepResult = await self._call(session, session.env.step_result, session.env.step_timeout_s, text)
            session.steps += 1
            session.done = result.terminated or result.truncated
        messages = [m.as_dict() for m in result.observation]
        return observation_payload(session, messages, reward=result.reward, done=session.done,
                                   valid_action=result.valid_action, verdict=public_verdict(result))

    def state(self, session: Session) -> dict[str, Any]:
        task = session.env.task
        return {"session_id": session.id, "env_id": self.env_id, "step_count": session.steps, "done": session.done,
                "task_id": task.id if task is not None else None}

    async def _call(self, session: Session, fn: Any, timeout: float | None, *args: Any, **kwargs: Any) -> Any:
        try:
            return await asyncio.wait_for(asyncio.to_thread(fn, *args, **kwargs), timeout)
        except asyncio.TimeoutError as exc:
            self.close(session.id)  # its thread may still run: the env instance is never reused
            raise SessionError("EXECUTION_ERROR", f"env call exceeded {timeout}s; session closed", 504) from exc
        except SessionError:
            raise
        except (IndexError, ValueError):
            raise
        except Exception as exc:
            raise SessionError("EXECUTION_ERROR", f"{type(exc).__name__}: {exc}", 500) from exc
