"""NeMo Gym glue without importing nemo-gym: per-session envs behind a `GymnasiumServer`, and the JSONL writer.

NeMo Gym's `gymnasium_agent` posts `/reset` once per rollout (with the JSONL row's metadata) and `/step` with each
model response (Responses API output items), summing the step rewards. Here each session id owns one `EnvSession`:
a message's text is the env action, a `function_call` item is run as the named tool (its reply goes back in
`info["tool_outputs"]`). The reward is 0 until the episode ends and then the env's verdict, so the agent's sum is
the verdict; the step request's own metadata is ignored (the session's task was fixed at reset) and nothing a client
sends can set a reward. The resources-server template using this lives in integrations/nemo_gym/.

NeMo Gym closes a session only when a step ends the episode; when `gymnasium_agent` runs out of `max_steps` first,
nobody tells the server, so `EnvSessions` keeps at most `max_sessions` envs and closes the least recently used.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..env import StepResult
from .episode import EnvSession, ToolArgumentError, observation_text, reply_text, task_rows

StepReturn = tuple[str | None, float, bool, bool, dict[str, Any]]


def response_tools(session: EnvSession) -> list[dict[str, Any]]:
    """The env's tools as Responses API function tools (flat: name, description, parameters; `strict` is required
    by the Responses schema, and False keeps optional parameters optional)."""
    return [
        {"type": "function", **tool.openai_schema()["function"], "strict": False} for tool in session.tools.values()
    ]


def write_jsonl(
    env_id: str,
    n: int,
    path: str | Path,
    *,
    seed: int = 0,
    agent_name: str = "rlvr_gym_agent",
    env_kwargs: Mapping[str, Any] | None = None,
) -> Path:
    """NeMo Gym rows for the first `n` tasks: `responses_create_params` (opening messages, the env's tools), the
    metadata `/reset` rebuilds the task from (env_id, env_kwargs, seed, task_index, task_id) and `agent_ref`."""
    probe = EnvSession(env_id, env_kwargs)
    tools = response_tools(probe)
    probe.close()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for row in task_rows(env_id, n, seed=seed, env_kwargs=env_kwargs):
            record = {
                "responses_create_params": {"input": row.messages, "tools": tools},
                "env_id": row.env_id,
                "env_kwargs": dict(env_kwargs or {}),
                "seed": row.seed,
                "task_index": row.task_index,
                "task_id": row.task_id,
                "agent_ref": {"type": "responses_api_agents", "name": agent_name},
            }
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


class EnvSessions:
    """One env per NeMo Gym session id (thread-safe: the server may run several sessions at once)."""

    def __init__(self, max_sessions: int = 4096) -> None:
        if max_sessions < 1:
            raise ValueError("max_sessions must be at least 1")
        self.max_sessions = max_sessions
        self._sessions: OrderedDict[str, EnvSession] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._sessions)

    def reset(self, metadata: Mapping[str, Any], session_id: str | None) -> tuple[str | None, dict[str, Any]]:
        """Start the row's task; the opening messages are already the row's input, so no observation is added."""
        if not session_id:
            raise ValueError("no session id: NeMo Gym's session middleware must be installed")
        if not metadata.get("env_id"):
            raise ValueError("row metadata has no env_id: write the data with rlvr_gym.integrations.nemo_gym")
        session = EnvSession(str(metadata["env_id"]), metadata.get("env_kwargs") or {})
        try:
            session.reset(
                task_index=metadata.get("task_index"), seed=metadata.get("seed"), task_id=metadata.get("task_id")
            )
        except BaseException:
            session.close()
            raise
        with self._lock:
            stale = [self._sessions.pop(session_id)] if session_id in self._sessions else []
            self._sessions[session_id] = session
            while len(self._sessions) > self.max_sessions:  # abandoned rollouts (the agent hit max_steps)
                stale.append(self._sessions.popitem(last=False)[1])
        for old in stale:
            old.close()
        return None, {"task_id": session.env.task.id}

    def step(self, response: Mapping[str, Any], session_id: str | None) -> StepReturn:
        """One model response (a Responses API object as a dict) -> (observation, reward, terminated, truncated, info)."""
        items = response_items(response)
        with self._lock:
            session = self._sessions.get(session_id or "")
            if session is not None:
                self._sessions.move_to_end(session_id or "")
        if session is None:
            raise KeyError(f"unknown session {session_id!r}: call /reset first (or it was closed or evicted)")
        if session.done:
            raise RuntimeError("the episode is over: call /reset for a new one")
        outputs: list[dict[str, Any]] = []
        observation, last = None, None
        for item in items:
            if item.get("type") == "function_call" and not session.done:
                reply, last = self._call(session, item, last)
                outputs.append({"call_id": item.get("call_id"), "output": reply})
        if not outputs:
            last = session.act(response_text(response))
            observation = reply_text(last) if not session.done else observation_text(last.observation) or None
        info: dict[str, Any] = {"tool_outputs": outputs} if outputs else {}
        if not session.done:
            return observation, 0.0, False, False, info
        verdict = session.final_verdict()
        info["verdict"] = verdict.model_dump(mode="json") if verdict is not None else None
        truncated = bool(last is not None and last.truncated)
        return observation, float(verdict.reward) if verdict is not None else 0.0, not truncated, truncated, info

    @staticmethod
    def _call(session: EnvSession, item: Mapping[str, Any], last: StepResult | None) -> tuple[str, StepResult | None]:
        """Run one function call as an env step; a bad call is answered with its error and is not a step."""
        tool = session.tools.get(str(item.get("name")))
        try:
            if tool is None:
                raise ToolArgumentError(f"unknown tool {item.get('name')!r}; available: {sorted(session.tools)}")
            raw = item.get("arguments")
            action = tool.action(raw if isinstance(raw, Mapping) else json.loads(raw or "{}"))
        except (json.JSONDecodeError, TypeError, ToolArgumentError) as exc:
            return f"error: {exc}", last
        result = session.act(action)
        return reply_text(result), result

    def close(self, session_id: str | None) -> None:
        with self._lock:
            session = self._sessions.pop(session_id or "", None)
        if session is not None:
            session.close()


def response_items(response: Any) -> list[Mapping[str, Any]]:
    """The output items of a Responses API response (as a dict); anything else is a clear error, not a step."""
    if not isinstance(response, Mapping):
        raise TypeError(f"a step action must be a Responses API response object, got {type(response).__name__}")
    items = response.get("output") or []
    if not isinstance(items, list) or not all(isinstance(item, Mapping) for item in items):
        raise TypeError("a Responses API response's `output` must be a list of item objects")
    return items


def response_text(response: Mapping[str, Any]) -> str:
    """All output text of a Responses API response (message items; reasoning items are not the action)."""
    parts: list[str] = []
    for item in response_items(response):
        if item.get("type") != "message":
            continue
        content = item.get("content")
        if isinstance(content, str):
            parts.append(content)
        else:
            parts.extend(
                str(c.get("text") or "")
                for c in content or []
                if isinstance(c, Mapping) and c.get("type") == "output_text"
            )
    return "".join(parts)
