"""`python -m rlvr_gym.mcp_server ENV_ID ...` (what MCP hosts spawn for stdio)."""

from . import main

raise SystemExit(main())
