"""Tool calls out of assistant text: the one format the tool envs ask for, parsed in linear time.

Format (what every tool prompt shows): `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` blocks, run in
order (a JSON list of calls in one block is accepted too), and TIER's chained block
`<tool_call return="one|all">{"0": {"Tool": {args}}, "1": {"Tool": {"x": "API_RESPONSE_0"}}}</tool_call>`.
Nothing else is a call: JSON in prose or code fences is content, so an example in the text can never run. Calls
inside `<think>` sections are thoughts. The closing tag is optional (servers often strip it as a stop sequence).

It lives in the tools family because envs own the action format they read; writing calls as text is core
(`rlvr_gym.tool_markup.format_tool_calls`, re-exported here), since agents and trainer adapters write it too.
Nothing raises on any input; work is linear in the input and capped (`MAX_CHARS`, `MAX_CALLS`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable
from typing import Any, Literal

from pydantic import BaseModel, Field

from rlvr_gym import ToolCall

MAX_CHARS = 2_000_000
MAX_CALLS = 64
MAX_THINK_SECTIONS = 64  # text after this many think sections counts as thought (bounds work on adversarial input)

#: A chained-call placeholder (TIER): the string value `API_RESPONSE_<id>` stands for the output of call `<id>`.
PLACEHOLDER = re.compile(r"API_RESPONSE_([A-Za-z0-9_\-]{1,64})")

ParseErrorKind = Literal[
    "invalid_json", "truncated", "invalid_call", "unknown_tool", "too_many_calls", "input_too_large"
]
SYNTAX_KINDS = frozenset({"invalid_json", "truncated", "invalid_call", "too_many_calls", "input_too_large"})

_THINK_OPEN, _THINK_CLOSE = "<think>", "</think>"
_TAG_OPEN = re.compile(r"<tool_call(?P<attrs>\s[^<>]{0,200})?>")
_TAG_CLOSE = "</tool_call>"
_RETURN_ATTR = re.compile(r"""return\s*=\s*["']?(one|all)["']?""")
_DECODER = json.JSONDecoder()


class ParseError(BaseModel):
    """One problem found while parsing; `span` is (start, end) in the original text."""

    kind: ParseErrorKind
    message: str
    span: tuple[int, int] | None = None
    call_index: int | None = None

    def describe(self) -> str:
        where = f" (call {self.call_index})" if self.call_index is not None else ""
        return f"{self.kind}{where}: {self.message}"


class ParsedOutput(BaseModel):
    """Everything `parse_tool_calls` found in one assistant message."""

    content: str = ""  # text outside think sections and call blocks
    think: str = ""
    calls: list[ToolCall] = Field(default_factory=list)
    errors: list[ParseError] = Field(default_factory=list)
    format: Literal["none", "hermes", "tier"] = "none"
    return_mode: Literal["one", "all"] | None = None
    blocks: int = 0  # `<tool_call>` blocks seen (parsed or not)

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def syntax_ok(self) -> bool:
        """True when every call block parsed (TIER's format check)."""
        return not any(e.kind in SYNTAX_KINDS for e in self.errors)

    def arguments(self, index: int) -> dict[str, Any]:
        return call_arguments(self.calls[index])


def call_arguments(call: ToolCall) -> dict[str, Any]:
    """Decode a call's raw `arguments` JSON; anything that is not an object gives {}."""
    try:
        value = json.loads(call.arguments) if call.arguments else {}
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def parse_tool_calls(
    text: Any, tools: Collection[str] | Iterable[dict[str, Any]] | None = None, *, max_calls: int = MAX_CALLS
) -> ParsedOutput:
    """Parse one assistant message (never raises). `tools` (names or OpenAI schemas) flags unknown tool names."""
    text = text if isinstance(text, str) else str(text)
    try:
        parsed = _Parser(text, max(0, max_calls)).run()
    except Exception as exc:  # a parser bug must not crash a rollout loop
        return ParsedOutput(
            content=text[:MAX_CHARS],
            errors=[ParseError(kind="invalid_json", message=f"internal parser error: {type(exc).__name__}: {exc}")],
        )
    if tools is not None:
        known = _tool_names(tools)
        parsed.errors.extend(
            ParseError(kind="unknown_tool", message=f"unknown tool {c.name!r}", call_index=i)
            for i, c in enumerate(parsed.calls)
            if c.name not in known
        )
    return parsed


def _tool_names(tools: Iterable[Any]) -> set[str]:
    names = set()
    for tool in tools:
        if isinstance(tool, str):
            names.add(tool)
        elif isinstance(tool, dict):
            fn = tool.get("function") if isinstance(tool.get("function"), dict) else tool
            if isinstance(fn.get("name"), str):
                names.add(fn["name"])
    return names


class _NotACall(Exception):
    """JSON that decoded but is not a tool call."""


class _Parser:
    """Single-use parse of one message: each character is scanned a bounded number of times."""

    def __init__(self, text: str, max_calls: int) -> None:
        self.errors: list[ParseError] = []
        if len(text) > MAX_CHARS:
            self.errors.append(
                ParseError(
                    kind="input_too_large",
                    span=(MAX_CHARS, len(text)),
                    message=f"only the first {MAX_CHARS} of {len(text)} characters were read",
                )
            )
            text = text[:MAX_CHARS]
        self.text = text
        self.max_calls = max_calls
        self.calls: list[ToolCall] = []
        self.format: str = "none"
        self.return_mode: str | None = None
        self.removed: list[tuple[int, int]] = []  # call-block spans, cut from the content
        self.blocks = 0

    def run(self) -> ParsedOutput:
        ranges, think = self.split_think()
        for start, end in ranges:
            self.scan(start, end)
        pieces, removed = [], iter(sorted(self.removed))
        cut = next(removed, None)
        for start, end in ranges:  # content = outside-think text minus call blocks (both sorted: one merge)
            pos = start
            while cut is not None and cut[0] < end:
                pieces.append(self.text[pos : max(pos, cut[0])])
                pos = max(pos, cut[1])
                cut = next(removed, None)
            pieces.append(self.text[pos:end])
        return ParsedOutput(
            content="".join(pieces).strip(),
            think=think,
            calls=self.calls,
            errors=self.errors,
            format=self.format,
            return_mode=self.return_mode,  # type: ignore[arg-type]
            blocks=self.blocks,
        )

    def split_think(self) -> tuple[list[tuple[int, int]], str]:
        """Outside-think ranges and the think text (an orphan `</think>` closes a prompt-opened section)."""
        text, pos, outside, think = self.text, 0, [], []
        first_open, first_close = text.find(_THINK_OPEN), text.find(_THINK_CLOSE)
        if first_close != -1 and (first_open == -1 or first_close < first_open):
            think.append(text[:first_close])
            pos = first_close + len(_THINK_CLOSE)
        for _ in range(MAX_THINK_SECTIONS):
            start = text.find(_THINK_OPEN, pos)
            outside.append((pos, len(text) if start == -1 else start))
            if start == -1:
                break
            end = text.find(_THINK_CLOSE, start + len(_THINK_OPEN))
            think.append(text[start + len(_THINK_OPEN) : end if end != -1 else len(text)])
            if end == -1:
                break
            pos = end + len(_THINK_CLOSE)
        else:  # beyond the cap everything is thought: calls there never run
            think.append(text[pos:])
        return [r for r in outside if r[1] > r[0]], "\n".join(t.strip() for t in think if t.strip())

    def scan(self, start: int, end: int) -> None:
        text, pos = self.text, start
        while pos < end:
            match = _TAG_OPEN.search(text, pos, end)
            if match is None:
                return
            if len(self.calls) >= self.max_calls or len(self.errors) > self.max_calls:
                self.errors.append(
                    ParseError(
                        kind="too_many_calls",
                        span=(match.start(), end),
                        message=f"more than {self.max_calls} call blocks; the rest were ignored",
                    )
                )
                self.removed.append((match.start(), end))
                return
            self.blocks += 1
            if self.format == "none":
                self.format = "hermes"
            value, json_end, error = self.decode(match.end(), end)
            if error is None:
                close = text.find(_TAG_CLOSE, json_end, end)  # stray text before the close tag is dropped
                if close != -1 and _TAG_OPEN.search(text, json_end, close) is None:
                    block_end = close + len(_TAG_CLOSE)
                else:
                    block_end = json_end
                self.removed.append((match.start(), block_end))
                mode = _RETURN_ATTR.search(match.group("attrs") or "")
                self.add(value, (match.start(), block_end), mode.group(1) if mode else None)
                pos = block_end
                continue
            next_open = _TAG_OPEN.search(text, match.end(), end)
            limit = next_open.start() if next_open is not None else end
            close = text.find(_TAG_CLOSE, match.end(), limit)
            block_end = close + len(_TAG_CLOSE) if close != -1 else limit
            truncated = close == -1 and next_open is None and error.endswith("@end")
            self.errors.append(
                ParseError(
                    kind="truncated" if truncated else "invalid_json",
                    span=(match.start(), block_end),
                    message=f"tool call block is not valid JSON: {error.removesuffix('@end')}",
                )
            )
            self.removed.append((match.start(), block_end))
            pos = block_end

    def decode(self, start: int, end: int) -> tuple[Any, int, str | None]:
        """JSON value starting at `start` (after whitespace) and ending before `end`; errors ending '@end' mean
        the text ran out (a cut-off generation). Decodes in place: no copy of the rest of the text."""
        pos = start
        while pos < end and self.text[pos] in " \t\r\n":
            pos += 1
        if pos >= end:
            return None, pos, "empty block@end"
        try:
            value, json_end = _DECODER.raw_decode(self.text, pos)
        except json.JSONDecodeError as exc:
            at_end = exc.pos >= end or exc.msg.startswith("Unterminated string")
            return None, pos, f"{exc.msg} at char {exc.pos}" + ("@end" if at_end else "")
        except RecursionError:
            return None, pos, "JSON nested too deeply"
        except ValueError as exc:  # e.g. integers beyond Python's digit limit
            return None, pos, str(exc)[:200]
        if json_end > end:
            return None, pos, "block runs into a <think> section"
        return value, json_end, None

    def add(self, value: Any, span: tuple[int, int], return_mode: str | None) -> None:
        try:
            items, tier = _interpret(value)
        except (_NotACall, ValueError, RecursionError) as exc:
            self.errors.append(ParseError(kind="invalid_call", message=str(exc)[:300], span=span))
            return
        if tier:
            self.format, self.return_mode = "tier", return_mode or "one"
        for name, arguments, call_id in items:
            if len(self.calls) >= self.max_calls:
                self.errors.append(
                    ParseError(
                        kind="too_many_calls",
                        span=span,
                        message=f"more than {self.max_calls} calls; the rest were ignored",
                    )
                )
                return
            self.calls.append(
                ToolCall(
                    id=call_id or f"call_{len(self.calls)}",
                    name=name,
                    arguments=json.dumps(arguments, ensure_ascii=False),
                )
            )


def _interpret(value: Any) -> tuple[list[tuple[str, dict[str, Any], str | None]], bool]:
    """JSON value -> ([(name, arguments, id)], is_tier_chain); `_NotACall` when it is not a call."""
    if isinstance(value, list) and value:
        return [_one(item) for item in value[: MAX_CALLS + 1]], False
    if not isinstance(value, dict):
        raise _NotACall(f"a tool call must be a JSON object, got {type(value).__name__}")
    if "name" in value:
        return [_one(value)], False
    if value and all(k.isdigit() and isinstance(v, dict) and len(v) == 1 for k, v in value.items()):
        chain = []
        for key, entry in list(value.items())[: MAX_CALLS + 1]:
            ((name, args),) = entry.items()
            chain.append((_name(name), _args(args), key))
        return chain, True
    raise _NotACall('a tool call needs "name" and "arguments" (or a TIER chain {"0": {"Tool": {args}}})')


def _one(value: Any) -> tuple[str, dict[str, Any], str | None]:
    if not isinstance(value, dict) or "name" not in value:
        raise _NotACall('each tool call must be an object with "name" and "arguments"')
    call_id = value.get("id") if isinstance(value.get("id"), str) else None
    return _name(value["name"]), _args(value.get("arguments", value.get("parameters", {}))), call_id


def _name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip():
        raise _NotACall(f"tool call name must be a non-empty string, got {str(name)[:60]!r}")
    return name.strip()


def _args(raw: Any) -> dict[str, Any]:
    if raw is None:
        return {}
    if isinstance(raw, str):
        raw = json.loads(raw) if raw.strip() else {}
    if not isinstance(raw, dict):
        raise _NotACall(f"tool call arguments must be a JSON object, got {type(raw).__name__}")
    return raw
