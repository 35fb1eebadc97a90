"""Turning raw assistant text into an ALFWorld command: tag extraction, aliases, did-you-mean hints.

Accepted forms: plain text (`go to fridge 1`), `<action>...</action>` (ReBel / verl-agent), and `Action: ...` lines.
A reply that commits to two different commands (two tags or two `Action:` lines that disagree) is ambiguous and
is not played. ALFWorld 0.4.2 spells placing as `move X to Y`; the older `put X in/on Y` is an alias.

Every function here is linear in the reply's length or bounded: tags are paired in one pass (`tags`), and a
command longer than `MAX_COMMAND_CHARS` (no admissible command is near that long) is rejected before any alias
regex or fuzzy matching sees it.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from .tags import action_lines, ascii_view, tag_blocks

MAX_COMMAND_CHARS = 200
MAX_REPLY_CHARS = 4096  # a reply (or one block of it) longer than this is not read as a command at all
MAX_BLOCKS = 8  # more `<action>` tags or `Action:` lines than this is not a reply, it is a scattershot
_PUT = re.compile(r"^put (.+?) (?:in|on|into|onto|in/on) (.+)$")
_TAKE = re.compile(r"^(?:pick up|pickup|get) (.+?) from (.+)$")
_ARTICLES = re.compile(r"\b(?:the|a|an)\b ")
_QUOTE_LIMIT = 120


@dataclass(frozen=True)
class ParsedAction:
    """The command a reply commits to (normalised), or why there is none (`error`)."""

    command: str
    error: str | None = None


def normalise(text: str) -> str:
    """Lower-cased, whitespace squeezed, surrounding punctuation and quotes dropped."""
    return " ".join(text.lower().split()).strip(" .!\"'`")


def _one(candidates: list[str], what: str) -> ParsedAction:
    if len(candidates) > MAX_BLOCKS:
        return ParsedAction("", f"more than {MAX_BLOCKS} {what}")
    if any(len(c) > MAX_REPLY_CHARS for c in candidates):
        return ParsedAction("", f"an action longer than {MAX_REPLY_CHARS} characters")
    distinct = list(dict.fromkeys(normalise(c) for c in candidates))
    if len(distinct) > 1:
        return ParsedAction("", f"{what} name {len(distinct)} different commands")
    return ParsedAction(distinct[0])


def parse_action(text: str) -> ParsedAction:
    """The one command of a reply: its `<action>` tags, else its `Action:` lines, else the whole text."""
    text = text or ""
    view = ascii_view(text)
    tags = tag_blocks(text, "action", limit=MAX_BLOCKS, view=view)
    if tags:
        parsed = _one(tags, "<action> tags")
    else:
        lines = action_lines(text, limit=MAX_BLOCKS, view=view)
        parsed = _one(lines if lines else [text], "Action: lines")
    if parsed.error is None and len(parsed.command) > MAX_COMMAND_CHARS:
        return ParsedAction("", f"the action is longer than {MAX_COMMAND_CHARS} characters")
    return parsed


def extract_command(text: str) -> str:
    """The command part of an action text ('' when there is none or it is ambiguous)."""
    return parse_action(text).command


def canonical_command(command: str, admissible: Sequence[str]) -> str | None:
    """The admissible command this text means, or None: exact match first, then the alias spellings."""
    if command in admissible:
        return command
    if not command or len(command) > MAX_COMMAND_CHARS:
        return None
    candidates = [_ARTICLES.sub("", command)]
    for cand in list(candidates):
        put = _PUT.match(cand)
        if put:
            candidates.append(f"move {put.group(1)} to {put.group(2)}")
        take = _TAKE.match(cand)
        if take:
            candidates.append(f"take {take.group(1)} from {take.group(2)}")
    for cand in candidates:
        if cand in admissible:
            return cand
    return None


def suggestions(command: str, admissible: Sequence[str], n: int = 3) -> list[str]:
    """Closest admissible commands (difflib ratio), for the invalid-action feedback."""
    if not command or len(command) > MAX_COMMAND_CHARS:
        return []
    return difflib.get_close_matches(command, list(admissible), n=n, cutoff=0.5)


def _quote(text: str) -> str:
    return repr(text if len(text) <= _QUOTE_LIMIT else text[:_QUOTE_LIMIT] + "...")


def invalid_feedback(parsed: ParsedAction, admissible: Sequence[str]) -> str:
    """What the env says to an unplayable reply (never echoes more than a short quote of it)."""
    if parsed.error:
        return f"Nothing happens. Your reply is ambiguous or malformed ({parsed.error}); give exactly one action."
    if not parsed.command:
        return "Nothing happens. No action was found in your reply; answer with exactly one admissible action."
    close = suggestions(parsed.command, admissible)
    hint = f" Did you mean: {', '.join(repr(c) for c in close)}?" if close else ""
    return f"Nothing happens. {_quote(parsed.command)} is not an admissible action.{hint}"
