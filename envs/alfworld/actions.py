"""Turning raw assistant text into an ALFWorld command: tag extraction, aliases, fuzzy suggestions.

Accepted forms: plain text (`go to fridge 1`), `<action>...</action>` (ReBel / verl-agent; the last tag wins),
and `Action: ...` lines. ALFWorld 0.4.2 spells placing as `move X to Y`; the older `put X in/on Y` is an alias.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

_ACTION_TAG = re.compile(r"<action>(.*?)</action>", re.DOTALL | re.IGNORECASE)
_ACTION_LINE = re.compile(r"^\s*action\s*:\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
_PUT = re.compile(r"^put (.+?) (?:in|on|into|onto|in/on) (.+)$")
_TAKE = re.compile(r"^(?:pick up|pickup|get) (.+?) from (.+)$")
_ARTICLES = re.compile(r"\b(?:the|a|an)\b ")


def extract_command(text: str) -> str:
    """The command part of an action text, lower-cased with whitespace squeezed and trailing punctuation dropped."""
    text = text or ""
    tags = _ACTION_TAG.findall(text)
    if tags:
        text = tags[-1]
    else:
        lines = _ACTION_LINE.findall(text)
        if lines:
            text = lines[-1]
    text = " ".join(text.strip().lower().split())
    return text.strip(" .!\"'`")


def canonical_command(command: str, admissible: Sequence[str]) -> str | None:
    """The admissible command this text means, or None: exact match first, then the alias spellings."""
    if command in admissible:
        return command
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
    return difflib.get_close_matches(command, list(admissible), n=n, cutoff=0.5)


def invalid_feedback(command: str, admissible: Sequence[str]) -> str:
    if not command:
        return "Nothing happens. No action was found in your reply; answer with exactly one admissible action."
    close = suggestions(command, admissible)
    hint = f" Did you mean: {', '.join(repr(c) for c in close)}?" if close else ""
    return f"Nothing happens. {command!r} is not an admissible action.{hint}"
