"""Env sessions behind the server: one env instance per session, with caps, idle expiry, reset rate and timeouts.

Everything a session sends back is built here, so the rule "verifier secrets never leave the server" lives in one
place: observations carry the task's agent view (id, prompt, public metadata) and the verdict's reward, pass,
validity and components — never `ground_truth`, `reference_actions` or the verifier's internals.

Clients that never close (OpenEnv's stateless HTTP style: POST /reset, then POST /step without a session) must not
lock anyone out, so a session that holds nothing a reset cannot rebuild — reset but not yet stepped, or over — is
evicted at once when room is needed, and leaves a small ticket behind: its reset (always an explicit seed or task
index, so the same task comes back), or its final state. A later call with its id rebuilds the session from the
ticket, or answers from it. A session in the middle of an episode is only reclaimed after `reclaim_idle_s`.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from ..env import Env, StepResult
from ..http_guard import RateLimiter, RequestRefused
from ..registry import make

MAX_TICKETS = 4096  # evicted sessions remembered for a rebuild (a few hundred bytes each)
MAX_EPISODE_ID = 256


class SessionError(RequestRefused):
    """A request the server refuses; `code` follows OpenEnv's error codes, `status` the HTTP status."""

    def __init__(self, code: str, message: str, status: int = 400, retry_after_s: float | None = None) -> None:
        super().__init__(status, code, message, retry_after_s)


@dataclass(frozen=True)
class SessionLimits:
    """Bounds that keep one noisy client from exhausting the server (docs/serving.md).

    Sessions held by a live WebSocket are never taken away; other sessions are evicted when a cap is reached: at
    once when a reset rebuilds them (not stepped yet, or over), after `reclaim_idle_s` idle in mid-episode. All
    sessions expire after `idle_s`. A client is a peer address: on loopback every local process is the same client.
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
    attached: bool = False  # held by a live WebSocket: never evicted
    temporary: bool = False  # one stateless call: its id is never handed out
    episode_id: str | None = None
    reset_args: dict[str, Any] | None = None  # the explicit seed/task_index of the last reset
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    @property
    def rebuildable(self) -> bool:
        """Nothing would be lost by closing it now: a ticket brings it back (or answers for it)."""
        return self.steps == 0 or self.done


@dataclass
class Ticket:
    """What an evicted session leaves behind."""

    client: str
    state: dict[str, Any]
    reset_args: dict[str, Any] | None
    over: str | None  # the refusal for a step, when the episode had ended


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
    metadata: dict[str, Any] = {"session_id": None if session.temporary else session.id,
                                "episode_id": session.episode_id, "step": session.steps, "valid_action": valid_action}
    if session.reset_args is not None:
        metadata.update(session.reset_args)  # the seed (or task_index) that brings this task back
    if task is not None:
        metadata["task"] = task.view().model_dump(mode="json")
    if verdict is not None:
        metadata["verdict"] = verdict
    return {"observation": {"messages": messages, "text": text, "done": done, "reward": reward,
                            "metadata": metadata},
            "reward": reward, "done": done, "metadata": metadata}


def _reset_args(data: dict[str, Any]) -> dict[str, Any]:
    """A reset request's task choice, made explicit: `task_index`, else `seed`, else a seed drawn here."""
    for key in ("task_index", "seed"):
        value = data.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            raise SessionError("VALIDATION_ERROR", f"{key} must be a non-negative integer")
    if data.get("task_index") is not None:
        args = {"task_index": data["task_index"]}
        return {**args, "seed": data["seed"]} if data.get("seed") is not None else args
    return {"seed": data["seed"] if data.get("seed") is not None else secrets.randbelow(2**31)}


def _episode_id(data: dict[str, Any]) -> str:
    value = data.get("episode_id")
    if value is None:
        return secrets.token_urlsafe(12)
    if not isinstance(value, str) or not 0 < len(value) <= MAX_EPISODE_ID:
        raise SessionError("VALIDATION_ERROR", f"episode_id must be a string of 1 to {MAX_EPISODE_ID} characters")
    return value


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
        self.tickets: OrderedDict[str, Ticket] = OrderedDict()
        make(env_id, **self.env_kwargs).close()  # fail at start-up, not on the first client, if the env is broken

    # ---- opening, finding, closing -------------------------------------------------------------------------------
    def open(self, client: str = "local", *, attached: bool = False, temporary: bool = False,
             session_id: str | None = None) -> Session:
        self.expire()
        mine = [s for s in self.sessions.values() if s.client == client]
        if len(mine) >= self.limits.per_client and not self._evict_one(mine):
            raise SessionError("CAPACITY_REACHED", f"this client already holds {len(mine)} sessions (the limit per "
                                                   "client); close some or wait for them to expire", 429, 5.0)
        if len(self.sessions) >= self.max_sessions and not self._evict_one(list(self.sessions.values())):
            raise SessionError("CAPACITY_REACHED", f"all {self.max_sessions} sessions are in use", 503, 5.0)
        try:
            env = make(self.env_id, **self.env_kwargs)
        except Exception as exc:
            raise SessionError("FACTORY_ERROR", f"could not build {self.env_id}: {exc}", 500) from exc
        session = Session(session_id or secrets.token_urlsafe(12), env, client=client, attached=attached,
                          temporary=temporary)
        self.sessions[session.id] = session
        return session

    def _evict_one(self, candidates: list[Session]) -> bool:
        """Close one session to make room (True when one was): rebuildable ones first, then mid-episode ones idle
        for reclaim_idle_s; least recently used first; never one held by a WebSocket or inside a call."""
        now = time.monotonic()
        free = [s for s in candidates if not (s.attached or s.temporary or s.lock.locked())
                and (s.rebuildable or now - s.last_used >= self.limits.reclaim_idle_s)]
        if not free:
            return False
        self.close(min(free, key=lambda s: (not s.rebuildable, s.last_used)).id, keep_ticket=True)
        return True

    async def resume(self, session_id: str) -> Session:
        """The live session, or one rebuilt from its ticket (same id, same task); else a 404 or, when the episode
        had ended, a 409 saying so."""
        self.expire()
        session = self.sessions.get(session_id)
        if session is not None:
            session.last_used = time.monotonic()
            return session
        ticket = self.tickets.get(session_id)
        if ticket is None:
            raise SessionError("SESSION_ERROR", f"no session {session_id[:64]!r} (expired or closed)", 404)
        if ticket.over is not None:
            raise SessionError("SESSION_ERROR", ticket.over, 409)
        session = self.open(ticket.client, session_id=session_id)
        del self.tickets[session_id]
        session.episode_id = ticket.state.get("episode_id")
        if ticket.reset_args is not None:
            async with session.lock:
                await self._reset_env(session, ticket.reset_args)
        return session

    def close(self, session_id: str, *, keep_ticket: bool = False) -> None:
        session = self.sessions.pop(session_id, None)
        if session is None:
            self.tickets.pop(session_id, None)
            return
        if keep_ticket and session.rebuildable and not session.temporary:
            self.tickets[session_id] = Ticket(session.client, self.state(session), session.reset_args,
                                              self._over(session) if session.done else None)
            while len(self.tickets) > MAX_TICKETS:
                self.tickets.popitem(last=False)
        session.env.close()

    def expire(self) -> None:
        now = time.monotonic()
        for sid in [sid for sid, s in self.sessions.items() if now - s.last_used > self.limits.idle_s]:
            self.close(sid, keep_ticket=True)

    def charge_reset(self, client: str) -> None:
        """Count one reset against `client`'s rate (a 429 with the wait when it is over)."""
        wait = self.resets.wait_s(client)
        if wait:
            raise SessionError("RATE_LIMITED", f"too many resets; retry in {wait:.1f}s", 429, wait)

    # ---- the episode ---------------------------------------------------------------------------------------------
    async def reset(self, session: Session, data: dict[str, Any], *, charged: bool = False) -> dict[str, Any]:
        args, episode_id = _reset_args(data), _episode_id(data)
        if not charged:
            self.charge_reset(session.client)
        async with session.lock:
            messages = await self._reset_env(session, args)
            session.episode_id = episode_id
        return observation_payload(session, messages, reward=None, done=False)

    async def _reset_env(self, session: Session, args: dict[str, Any]) -> list[dict[str, Any]]:
        options = {"task_index": args["task_index"]} if "task_index" in args else None
        try:
            messages, _ = await self._call(session, session.env.reset, session.env.reset_timeout_s,
                                           seed=args.get("seed"), options=options)
        except (IndexError, ValueError) as exc:
            raise SessionError("VALIDATION_ERROR", str(exc)) from exc
        session.steps, session.done, session.reset_args = 0, False, args
        return messages

    async def step(self, session: Session, action: Any) -> dict[str, Any]:
        text = action.get("text") if isinstance(action, dict) else action
        if not isinstance(text, str):
            raise SessionError("VALIDATION_ERROR", 'the action must be {"text": "<the model output>"}')
        if session.env.task is None:
            raise SessionError("SESSION_ERROR", "reset the session before stepping", 409)
        if session.done:  # the env would answer reward 0 beside the episode's verdict: say what happened instead
            raise SessionError("SESSION_ERROR", self._over(session), 409)
        async with session.lock:
            result: StepResult = await self._call(session, session.env.step_result, session.env.step_timeout_s, text)
            session.steps += 1
            session.done = result.terminated or result.truncated
        messages = [m.as_dict() for m in result.observation]
        return observation_payload(session, messages, reward=result.reward, done=session.done,
                                   valid_action=result.valid_action, verdict=public_verdict(result))

    async def step_once(self, client: str, data: dict[str, Any]) -> dict[str, Any]:
        """OpenEnv's stateless step: a fresh env on the request's task (`task_index`/`seed`, else a drawn seed, named
        in the reply), one action, closed again. A single-turn episode is whole this way."""
        self.charge_reset(client)
        session = self.open(client, temporary=True)
        try:
            await self.reset(session, data, charged=True)
            return await self.step(session, data.get("action"))
        finally:
            self.close(session.id)

    def state(self, session: Session) -> dict[str, Any]:
        task = session.env.task
        return {"session_id": session.id, "episode_id": session.episode_id, "env_id": self.env_id,
                "step_count": session.steps, "done": session.done, "task_id": task.id if task is not None else None}

    def state_of(self, session_id: str | None) -> dict[str, Any]:
        """A session's state (from its ticket when evicted); without an id, a fresh env's, as OpenEnv answers."""
        if session_id is None:
            return {"session_id": None, "episode_id": None, "env_id": self.env_id, "step_count": 0, "done": False,
                    "task_id": None}
        self.expire()
        session = self.sessions.get(session_id)
        if session is not None:
            session.last_used = time.monotonic()
            return self.state(session)
        if session_id in self.tickets:
            return dict(self.tickets[session_id].state)
        raise SessionError("SESSION_ERROR", f"no session {session_id[:64]!r} (expired or closed)", 404)

    def _over(self, session: Session) -> str:
        verdict = session.env.verdict
        score = f" (reward {verdict.reward:g}, passed {verdict.passed})" if verdict is not None else ""
        return f"the episode is over{score}; reset to start another"

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
