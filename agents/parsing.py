"""Tool-call parsing for the agents side: a re-export of `rlvr_gym.toolcalls`, the project's one parser.

The parser lives in the core because envs parse actions too and must not import agents; this module only gives
agent code a local name for it.
"""

from rlvr_gym.toolcalls import (
    MAX_CALLS,
    MAX_CHARS,
    PLACEHOLDER,
    ArgumentMismatch,
    ParsedOutput,
    ParseError,
    call_arguments,
    check_calls,
    format_tool_calls,
    normalize_tools,
    parse_tool_calls,
    validate_arguments,
)

__all__ = [
    "MAX_CALLS", "MAX_CHARS", "PLACEHOLDER", "ArgumentMismatch", "ParseError", "ParsedOutput", "call_arguments",
    "check_calls", "format_tool_calls", "normalize_tools", "parse_tool_calls", "validate_arguments",
]
