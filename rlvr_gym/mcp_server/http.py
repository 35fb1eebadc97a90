"""MCP over streamable HTTP behind the shared guard (`rlvr_gym.http_guard`), with its sessions bounded.

The SDK opens a session for every POST without `Mcp-Session-Id`, and a session lives until the client sends DELETE
or it idles out. So new sessions are rate-limited per client, live ones are capped, idle ones close after
`SESSION_IDLE_S`; at the sustained rate one client cannot fill the cap within an idle period. The env sessions
behind them have the env server's own caps (`SessionLimits`). Host and Origin are checked by our guard, so the SDK's
own DNS-rebinding check is switched off (it would refuse the names `--allowed-host` adds).
"""

from __future__ import annotations

from typing import Any

from mcp.server.fastmcp import FastMCP
from mcp.server.transport_security import TransportSecuritySettings

from ..http_guard import GuardPolicy, RateLimiter, Scope, client_of, guard

MAX_SESSIONS = 2048
SESSION_IDLE_S = 300.0
NEW_SESSIONS_PER_S = 5.0  # per client, in bursts of NEW_SESSION_BURST: 64 + 5 * 300 < 2048
NEW_SESSION_BURST = 64
MAX_BODY_BYTES = 4 << 20


def fastmcp(name: str, instructions: str, *, host: str = "127.0.0.1", port: int = 8000) -> FastMCP:
    """A FastMCP server with our session bounds (both server modes are built here)."""
    return FastMCP(name, host=host, port=port, instructions=instructions, max_sessions=MAX_SESSIONS,
                   session_idle_timeout=SESSION_IDLE_S, max_request_body_size=MAX_BODY_BYTES,
                   transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))


def mcp_policy(token: str | None = None) -> GuardPolicy:
    """JSON-only `/mcp`, bounded bodies, and new sessions rate-limited per client."""
    opened = RateLimiter(NEW_SESSIONS_PER_S, NEW_SESSION_BURST)

    def admit(scope: Scope, headers: dict[str, bytes]) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and "mcp-session-id" not in headers:
            opened.take(client_of(scope), "new MCP sessions")

    return GuardPolicy(token=token, json_paths=("/mcp",), max_body_bytes=MAX_BODY_BYTES, admit=admit)


def http_app(server: FastMCP, policy: GuardPolicy | None = None) -> Any:
    """The server's streamable HTTP app behind the guard (`policy` defaults to `mcp_policy()`: no token)."""
    return guard(server.streamable_http_app(), policy or mcp_policy())
