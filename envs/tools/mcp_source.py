"""Tools from an external MCP server as a `Toolset`, so a tool env can run its calls on that server.

Each episode's world (`new_world()`) is one MCP client session on a background event loop: the server keeps the
world state per session, so a new session is a fresh world. Calls still go through the family's `Executor`, which
keeps provenance from what the server returned, never from what the model claims.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from contextlib import AsyncExitStack
from typing import Any

from .env import ToolDepthEnv
from .toolset import ToolOutcome, Toolset
from .verifier import ToolEpisode

_SENTINEL = object()


class McpWorld:
    """One live MCP client session (stdio command or streamable-HTTP URL), driven from synchronous code."""

    def __init__(self, command: Sequence[str] | None = None, url: str | None = None, timeout_s: float = 30.0) -> None:
        if (command is None) == (url is None):
            raise ValueError("give exactly one of command (stdio) or url (streamable HTTP)")
        self.command, self.url, self.timeout_s = list(command or []), url, timeout_s
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mcp-client", daemon=True)
        self._thread.start()
        self._queue: asyncio.Queue[Any] | None = None
        ready: Future[Any] = Future()
        self._done = asyncio.run_coroutine_threadsafe(self._serve(ready), self._loop)
        try:
            self.tools: list[Any] = ready.result(timeout_s)
        except BaseException as exc:
            self._loop.call_soon_threadsafe(self._loop.stop)  # no session: do not leave the loop thread behind
            where = self.url or " ".join(self.command)
            raise ConnectionError(f"could not open an MCP session with {where}: {type(exc).__name__}") from exc

    async def _serve(self, ready: Future[Any]) -> None:
        """One task owns the transport for its whole life (anyio scopes must exit in the task that entered them)."""
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client
        from mcp.client.streamable_http import streamable_http_client

        self._queue = asyncio.Queue()
        try:
            async with AsyncExitStack() as stack:
                if self.url is not None:
                    read, write, _ = await stack.enter_async_context(streamable_http_client(self.url))
                else:
                    params = StdioServerParameters(command=self.command[0], args=self.command[1:])
                    read, write = await stack.enter_async_context(stdio_client(params))
                session = await stack.enter_async_context(ClientSession(read, write))
                await session.initialize()
                ready.set_result((await session.list_tools()).tools)
                while (item := await self._queue.get()) is not _SENTINEL:
                    name, arguments, reply = item
                    try:
                        reply.set_result(await session.call_tool(name, arguments))
                    except Exception as exc:  # a transport failure becomes a tool error, never a crash
                        reply.set_exception(exc)
        except Exception as exc:
            if not ready.done():
                ready.set_exception(exc)

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        reply: Future[Any] = Future()
        self._loop.call_soon_threadsafe(self._queue.put_nowait, (name, arguments, reply))  # type: ignore[union-attr]
        return reply.result(self.timeout_s)

    def close(self) -> None:
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._queue.put_nowait, _SENTINEL)  # type: ignore[union-attr]
            try:
                self._done.result(self.timeout_s)
            except Exception:
                pass
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(self.timeout_s)


def outcome_from(result: Any) -> ToolOutcome:
    """An MCP `CallToolResult` as the family's `ToolOutcome` (structured content first, else the text)."""
    body = result.structuredContent
    if isinstance(body, dict) and "ok" in body:
        try:
            return ToolOutcome.model_validate(body)
        except ValueError:
            pass
    text = "".join(getattr(c, "text", "") or "" for c in result.content)
    if result.isError:
        return ToolOutcome(ok=False, error_kind="runtime", error=text[:2000])
    try:
        value = json.loads(text)
    except ValueError:
        value = text
    if isinstance(value, dict) and set(value) == {"result"}:
        value = value["result"]
    return ToolOutcome(ok=True, result=value)


class McpToolset(Toolset):
    """The tools an MCP server lists; `local` (optional) supplies generator metadata for tools of the same name."""

    def __init__(
        self,
        command: Sequence[str] | None = None,
        url: str | None = None,
        *,
        local: Toolset | None = None,
        timeout_s: float = 30.0,
    ) -> None:
        self.command, self.url, self.timeout_s = command, url, timeout_s
        probe = McpWorld(command, url, timeout_s)
        try:
            self.remote = {t.name: t for t in probe.tools}
        finally:
            probe.close()
        local_tools = local.tools if local is not None else {}
        super().__init__([local_tools[n] for n in self.remote if n in local_tools], lambda: None)
        self.worlds: list[McpWorld] = []

    def __contains__(self, name: str) -> bool:
        return name in self.remote

    def names(self) -> list[str]:
        return list(self.remote)

    def schemas(self, names: Any = None) -> list[dict[str, Any]]:
        chosen = self.remote if names is None else {n: self.remote[n] for n in names if n in self.remote}
        return [
            {
                "type": "function",
                "function": {"name": t.name, "description": t.description or "", "parameters": t.inputSchema},
            }
            for t in chosen.values()
        ]

    def new_world(self) -> McpWorld:
        world = McpWorld(self.command, self.url, self.timeout_s)
        self.worlds.append(world)
        return world

    def execute(self, world: Any, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        if name not in self.remote:
            return ToolOutcome(ok=False, error_kind="unknown_tool", error=f"unknown tool {name!r}")
        try:
            return outcome_from(world.call(name, arguments))
        except Exception as exc:
            return ToolOutcome(ok=False, error_kind="runtime", error=f"MCP call failed: {type(exc).__name__}: {exc}")

    def close(self) -> None:
        while self.worlds:
            self.worlds.pop().close()


class McpToolDepthEnv(ToolDepthEnv):
    """ToolDepth whose tool calls run on an MCP server (kwargs `mcp_command` list or `mcp_url`)."""

    def __init__(self, *, mcp_command: Sequence[str] | None = None, mcp_url: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.mcp_toolset = McpToolset(mcp_command, mcp_url, local=self.source.toolset)

    def start(self, task: Any) -> Any:
        self.mcp_toolset.close()  # the previous episode's session (its world) ends with the episode
        self.episode = ToolEpisode(task, self.mcp_toolset)
        return task.prompt_messages()

    def close(self) -> None:
        self.mcp_toolset.close()
        super().close()
