"""`RemoteEnv`: an rlvr-gym env served elsewhere (`rlvr-gym serve`), driven over the WebSocket protocol.

It is a normal `rlvr_gym.Env`, so the runner evaluates a remote env exactly like a local one
(`rlvr-gym eval rlvr/Remote-v0 --env-arg base_url=http://host:port`). The task it exposes is the server's agent
view: no ground truth and no reference actions ever reach this side, so verification stays on the server.
The server's launch token comes from `token=`, the `?token=` of `base_url` (the URL `rlvr-gym serve` prints) or
`$RLVR_GYM_TOKEN` (preferred: env args are recorded in the run manifest), and travels as `Authorization: Bearer`.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any
from urllib.parse import parse_qs, urlsplit, urlunsplit

from ..env import Env, StepResult
from ..http_guard import TOKEN_ENV
from ..types import EnvUnavailable, Message, Task, Verdict


def split_token(base_url: str, token: str | None = None) -> tuple[str, str | None]:
    """(the URL without its query, the token): `token`, else the URL's `?token=`, else $RLVR_GYM_TOKEN."""
    parts = urlsplit(base_url)
    in_url = parse_qs(parts.query).get("token", [None])[0]
    bare = urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")).rstrip("/")
    return bare, token or in_url or os.environ.get(TOKEN_ENV) or None


class RemoteEnv(Env):
    family = "remote"

    def __init__(self, *, base_url: str | None = None, token: str | None = None, max_turns: int = 1000,
                 timeout_s: float = 300.0, **kwargs: Any) -> None:
        super().__init__(max_turns=max_turns, **kwargs)
        if not base_url:
            raise EnvUnavailable("rlvr/Remote-v0 needs the server's address: base_url=http://host:port")
        from websockets.exceptions import InvalidStatus
        from websockets.sync.client import connect

        base_url, token = split_token(base_url, token)
        url = base_url.replace("https://", "wss://").replace("http://", "ws://") + "/ws"
        headers = {"Authorization": f"Bearer {token}"} if token else None
        try:
            self._connection = connect(url, additional_headers=headers, open_timeout=timeout_s, max_size=2**26)
            self.socket = self._connection.__enter__()
        except InvalidStatus as exc:
            status = exc.response.status_code
            hint = f" (set {TOKEN_ENV} or pass the URL with ?token=)" if status == 401 else ""
            raise EnvUnavailable(f"env server at {base_url} refused the connection: HTTP {status}{hint}") from exc
        except OSError as exc:
            raise EnvUnavailable(f"no env server at {base_url}: {exc}") from exc
        self.timeout_s = timeout_s

    def _request(self, frame: dict[str, Any]) -> dict[str, Any]:
        """Send one frame; a RATE_LIMITED reply is waited out and retried (within timeout_s), other errors raise."""
        deadline = time.monotonic() + self.timeout_s
        while True:
            self.socket.send(json.dumps(frame))
            reply = json.loads(self.socket.recv(timeout=self.timeout_s))
            if reply.get("type") != "error":
                return reply["data"]
            data = reply.get("data") or {}
            wait = float(data.get("retry_after_s") or 0.0)
            if data.get("code") != "RATE_LIMITED" or time.monotonic() + wait > deadline:
                raise RuntimeError(f"env server error {data.get('code')}: {data.get('message')}")
            time.sleep(wait)

    def get_task(self, index: int) -> Task:
        data = self._request({"type": "reset", "data": {"task_index": index}})
        return self._task(data)

    @staticmethod
    def _task(data: dict[str, Any]) -> Task:
        view = data["metadata"]["task"]
        return Task(id=view["id"], prompt=view["prompt"], metadata=view.get("metadata") or {})

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        options = options or {}
        request: dict[str, Any] = {}
        if options.get("task_index") is not None:
            request["task_index"] = int(options["task_index"])
        elif seed is not None:
            request["seed"] = seed
        data = self._request({"type": "reset", "data": request})
        self.task = self._task(data)
        self.task_index = request.get("task_index")
        self.turn, self.actions, self.done, self.verdict = 0, [], False, None
        messages = data["observation"]["messages"]
        self._last_observation = [Message.model_validate(m) for m in messages]
        return messages, {"task_id": self.task.id, "task_index": self.task_index,
                          "task_metadata": self.task.metadata, "max_turns": self.max_turns}

    def respond(self, action: str) -> StepResult:
        data = self._request({"type": "step", "data": {"text": action}})
        meta = data.get("metadata") or {}
        verdict = Verdict(**meta["verdict"]) if meta.get("verdict") else None
        return StepResult(observation=[Message.model_validate(m) for m in data["observation"]["messages"]],
                          reward=float(data.get("reward") or 0.0), terminated=bool(data.get("done")),
                          valid_action=bool(meta.get("valid_action", True)), verdict=verdict)

    def truncation_verdict(self) -> Verdict:
        return self.verdict or Verdict(reward=0.0, passed=False, feedback="the remote episode did not end")

    def close(self) -> None:
        try:
            self.socket.send(json.dumps({"type": "close"}))
        except Exception:
            pass
        self._connection.__exit__(None, None, None)
