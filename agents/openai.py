"""OpenAI-compatible HTTP policy (`/v1/chat/completions` and `/v1/completions`) over httpx, async.

Works against OpenAI, vLLM (`vllm serve`), llama.cpp's server, SGLang and friends. Robustness rules:
- a concurrency limit (semaphore) and a per-request timeout;
- retries with exponential backoff (and jitter, honouring `Retry-After`) on 429, 408, 5xx, timeouts, dropped
  connections and malformed bodies; other 4xx fail at once (retrying a bad request cannot help);
- after the retries a typed `PolicyError` (kind `generation_timeout` for timeouts, else `policy_error`, with the
  HTTP status) which the rollout runner records on the episode: a flaky server never crashes a run;
- logprobs are requested and parsed when the server offers them; a server that rejects the logprobs field is asked
  again without it (once, remembered);
- usage (tokens, requests, retries, failures) is accounted on `policy.stats`.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from rlvr_gym import Agent, ErrorKind, Generation, GenerationRequest, Message, PolicyError, ToolCall, Usage

RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


@dataclass
class PolicyStats:
    """Running totals over the policy's lifetime (usage accounting)."""

    requests: int = 0
    retries: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


class _Retryable(Exception):
    def __init__(self, message: str, *, kind: ErrorKind = ErrorKind.POLICY_ERROR, status: int | None = None,
                 retry_after: float | None = None) -> None:
        super().__init__(message)
        self.kind, self.status, self.retry_after = kind, status, retry_after


def normalize_base_url(url: str) -> str:
    """`http://host:port` -> `http://host:port/v1`; a URL with a path is kept as given (minus a trailing slash)."""
    url = url.rstrip("/")
    return url + "/v1" if urlsplit(url).path in ("", "/") else url


class OpenAIPolicy:
    """An async, batched (by concurrency) policy over an OpenAI-compatible server."""

    def __init__(
        self,
        model: str,
        base_url: str,
        *,
        api_key: str | None = None,
        api_key_env: str | None = "OPENAI_API_KEY",
        concurrency: int = 8,
        timeout_s: float = 120.0,
        max_retries: int = 4,
        backoff_s: float = 0.5,
        max_backoff_s: float = 20.0,
        endpoint: str = "auto",
        request_logprobs: bool = True,
        return_token_ids: bool = False,
        extra_body: dict[str, Any] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        tokenizer: Any = None,
    ) -> None:
        if endpoint not in ("auto", "chat", "completions"):
            raise ValueError("endpoint must be 'auto', 'chat' or 'completions'")
        if concurrency < 1:
            raise ValueError("concurrency must be >= 1")
        self.model = model
        self.base_url = normalize_base_url(base_url)
        self.api_key = api_key if api_key is not None else (os.environ.get(api_key_env) if api_key_env else None)
        self.concurrency = concurrency
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.endpoint = endpoint
        self.request_logprobs = request_logprobs
        self.return_token_ids = return_token_ids
        self.extra_body = dict(extra_body or {})
        self.transport = transport
        # With a local tokenizer the ChatAgent works token-in/token-out through /v1/completions (vLLM servers).
        self.tokenizer = tokenizer
        self.stats = PolicyStats()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: httpx.AsyncClient | None = None
        self._semaphore: asyncio.Semaphore | None = None

    # ---- the Policy protocol -------------------------------------------------------------------------------------
    async def generate(self, requests: list[GenerationRequest]) -> list[Generation]:
        return list(await asyncio.gather(*(self._one(r) for r in requests)))

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    # ---- request building and parsing ----------------------------------------------------------------------------
    def _route(self, request: GenerationRequest) -> str:
        if request.messages is not None and self.endpoint != "completions":
            return "chat"
        if request.prompt is None and request.prompt_token_ids is None:
            raise ValueError("a GenerationRequest needs messages, prompt or prompt_token_ids")
        return "completions"

    def _payload(self, request: GenerationRequest, route: str) -> dict[str, Any]:
        s = request.sampling
        body: dict[str, Any] = {"model": self.model, "max_tokens": s.max_new_tokens, "temperature": s.temperature,
                                "top_p": s.top_p}
        if s.stop:
            body["stop"] = list(s.stop)
        if s.seed is not None:
            body["seed"] = s.seed
        want_logprobs = s.logprobs and self.request_logprobs
        if route == "chat":
            body["messages"] = [_wire_message(m) for m in request.messages or []]
            if request.tools:
                body["tools"] = request.tools
            if want_logprobs:
                body["logprobs"] = True
                body["top_logprobs"] = 1  # llama.cpp's server returns chat logprobs only when this is set
        else:
            if request.prompt_token_ids is not None:
                body["prompt"] = list(request.prompt_token_ids)
            elif request.prompt is not None:
                body["prompt"] = request.prompt
            elif request.messages:
                body["prompt"] = "\n".join(m.text() for m in request.messages)
            if want_logprobs:
                body["logprobs"] = 1
        if self.return_token_ids:
            body["return_token_ids"] = True  # vLLM >= 0.10.2: sampled and prompt token ids in the response
        body.update(self.extra_body)
        return body

    async def _one(self, request: GenerationRequest) -> Generation:
        route = self._route(request)
        path = "/chat/completions" if route == "chat" else "/completions"
        start = time.perf_counter()
        data = await self._post(path, lambda: self._payload(request, route))
        generation = _parse(data, route)
        generation.latency_s = time.perf_counter() - start
        self.stats.prompt_tokens += generation.usage.prompt_tokens
        self.stats.completion_tokens += generation.usage.completion_tokens
        return generation

    # ---- transport with retries ----------------------------------------------------------------------------------
    def _bind(self) -> tuple[httpx.AsyncClient, asyncio.Semaphore]:
        """The client and semaphore belong to one event loop; a new loop (a new asyncio.run) gets fresh ones."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
            self._client = httpx.AsyncClient(
                base_url=self.base_url, headers=headers, timeout=httpx.Timeout(self.timeout_s),
                transport=self.transport, limits=httpx.Limits(max_connections=self.concurrency),
            )
            self._semaphore = asyncio.Semaphore(self.concurrency)
            self._loop = loop
        assert self._semaphore is not None
        return self._client, self._semaphore

    async def _post(self, path: str, build: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """POST with retries; `build` makes the body (again, if the server refuses the logprobs field)."""
        client, semaphore = self._bind()
        body = build()
        last: _Retryable | None = None
        async with semaphore:
            for attempt in range(self.max_retries + 1):
                if attempt:
                    self.stats.retries += 1
                    await asyncio.sleep(self._delay(attempt, last))
                self.stats.requests += 1
                try:
                    return await self._attempt(client, path, body)
                except _Retryable as exc:
                    last = exc
                except PolicyError as exc:
                    if exc.status == 400 and "logprobs" in body and "logprob" in str(exc).lower():
                        self.request_logprobs = False  # this server does not do logprobs: stop asking
                        body = build()
                        continue
                    self.stats.failures += 1
                    raise
        self.stats.failures += 1
        assert last is not None
        raise PolicyError(
            f"{self.base_url}{path} failed after {self.max_retries + 1} attempts: {last}", kind=last.kind,
            status=last.status,
        ) from last

    async def _attempt(self, client: httpx.AsyncClient, path: str, body: dict[str, Any]) -> dict[str, Any]:
        try:
            response = await client.post(path, json=body)
        except httpx.TimeoutException as exc:
            raise _Retryable(f"timeout after {self.timeout_s}s ({type(exc).__name__})",
                             kind=ErrorKind.GENERATION_TIMEOUT) from exc
        except httpx.TransportError as exc:
            raise _Retryable(f"connection error: {type(exc).__name__}: {exc}") from exc
        if response.status_code in RETRY_STATUSES or response.status_code >= 500:
            raise _Retryable(f"HTTP {response.status_code}: {response.text[:300]}", status=response.status_code,
                             retry_after=_retry_after(response))
        if response.status_code >= 400:
            raise PolicyError(f"HTTP {response.status_code} from {path}: {response.text[:500]}",
                              status=response.status_code)
        try:
            data = response.json()
        except ValueError as exc:
            raise _Retryable(f"malformed JSON body: {response.text[:200]!r}", status=response.status_code) from exc
        if not isinstance(data, dict) or not isinstance(data.get("choices"), list) or not data["choices"]:
            raise _Retryable(f"response without choices: {str(data)[:200]}", status=response.status_code)
        return data

    def _delay(self, attempt: int, last: _Retryable | None) -> float:
        if last is not None and last.retry_after is not None:
            return min(last.retry_after, self.max_backoff_s)
        return min(self.backoff_s * 2 ** (attempt - 1), self.max_backoff_s) * random.uniform(0.5, 1.0)


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _wire_message(message: Message) -> dict[str, Any]:
    """Our Message as OpenAI wire JSON (tool calls nested under `function`)."""
    out = message.model_dump(exclude_none=True, exclude={"tool_calls"})
    if message.tool_calls:
        out["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in message.tool_calls
        ]
    return out


def _content_logprobs(choice: dict[str, Any]) -> list[float] | None:
    entries = (choice.get("logprobs") or {}).get("content") or None
    return [float(e.get("logprob", 0.0)) for e in entries] if entries else None


def _parse(data: dict[str, Any], route: str) -> Generation:
    """A response body as a Generation; tolerant of servers that omit optional fields."""
    choice = data["choices"][0]
    if not isinstance(choice, dict):
        raise PolicyError(f"malformed choice: {str(choice)[:200]}")
    tool_calls = None
    if route == "chat":
        message = choice.get("message") or {}
        text = message.get("content") or ""
        tool_calls = _tool_calls(message.get("tool_calls"))
        logprobs = _content_logprobs(choice)
    else:
        text = choice.get("text") or ""
        raw = (choice.get("logprobs") or {}).get("token_logprobs")
        # Legacy `token_logprobs`; llama.cpp's server answers completions in the chat shape (`content` entries).
        logprobs = [float(x) if x is not None else 0.0 for x in raw] if raw else _content_logprobs(choice)
    token_ids = choice.get("token_ids")
    prompt_ids = choice.get("prompt_token_ids") or data.get("prompt_token_ids")
    usage = data.get("usage") or {}
    completion = usage.get("completion_tokens")
    if completion is None:
        completion = len(token_ids or logprobs or [])
    return Generation(
        text=text,
        token_ids=list(token_ids) if token_ids else None,
        logprobs=logprobs,
        prompt_token_ids=list(prompt_ids) if prompt_ids else None,
        finish_reason=choice.get("finish_reason"),
        tool_calls=tool_calls,
        usage=Usage(prompt_tokens=int(usage.get("prompt_tokens") or 0), completion_tokens=int(completion)),
    )


def _tool_calls(raw: Any) -> list[ToolCall] | None:
    if not raw:
        return None
    calls = []
    for item in raw:
        function = (item or {}).get("function") or {}
        arguments = function.get("arguments", "{}")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments)
        calls.append(ToolCall(id=str(item.get("id") or ""), name=str(function.get("name") or ""), arguments=arguments))
    return calls or None


# ---- agent factory (entry point `openai`) --------------------------------------------------------------------------
_POLICY_OPTIONS = ("api_key_env", "timeout_s", "max_retries", "endpoint", "backoff_s", "max_backoff_s",
                   "request_logprobs", "return_token_ids", "extra_body")


def split_model_url(arg: str | None) -> tuple[str, str]:
    """`<model>@<base_url>` -> (model, base_url); without `@`, the base URL comes from $OPENAI_BASE_URL."""
    if not arg:
        raise ValueError("openai agent needs a model: openai:<model>@<base_url>")
    for marker in ("@http://", "@https://"):
        if marker in arg:
            model, _, rest = arg.partition(marker)
            return model, marker[1:] + rest
    if "@" in arg:
        model, _, url = arg.rpartition("@")
        return model, url
    url = os.environ.get("OPENAI_BASE_URL")
    if not url:
        raise ValueError(f"no base URL in {arg!r} and $OPENAI_BASE_URL is unset: use openai:<model>@<base_url>")
    return arg, url


def make_openai_policy(arg: str | None, options: dict[str, Any], **defaults: Any) -> OpenAIPolicy:
    """Build the policy from a spec argument and the HTTP options, consuming them from `options`."""
    model, url = split_model_url(arg)
    kwargs = {**defaults, **{k: options.pop(k) for k in _POLICY_OPTIONS if options.get(k) is not None}}
    concurrency = options.pop("concurrency", None)
    return OpenAIPolicy(model, url, concurrency=concurrency or 8, **kwargs)


def openai_agent(arg: str | None, **options: Any) -> Agent:
    """`openai:<model>@<base_url>`: a ChatAgent over an OpenAI-compatible endpoint (API key from `api_key_env`)."""
    from .chat import ChatAgent, split_agent_options

    agent_opts, rest = split_agent_options(options)
    rest["concurrency"] = agent_opts.pop("concurrency", None)
    policy = make_openai_policy(arg, rest)
    if rest:
        warnings.warn(f"openai agent: ignoring unknown options {sorted(rest)}", stacklevel=2)
    return ChatAgent(policy, **agent_opts)
