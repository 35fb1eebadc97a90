"""Linear-time extraction of `<tag>...</tag>` blocks and `Action: ...` lines from untrusted model text.

`re.findall(r"<t>(.*?)</t>", text, re.S)` restarts a scan to the end of the text from every opening tag, so a
reply of many opening tags and no closing one costs O(n²); `^\\s*action\\s*:` with MULTILINE rescans every run of
newlines. Here the text is first mapped to a same-length ASCII lower-case view (`ascii_view`), every literal is
located in it by a case-sensitive C-level search, and each search starts where the previous one ended, so any
input costs O(n). Results are capped (`limit`): callers treat more blocks than that as malformed.
"""

from __future__ import annotations

import re
from functools import lru_cache

_ACTION_COLON = re.compile(r"action[ \t]*:")
MAX_ACTION_MARKERS = 64  # `action:` written more often than this (anywhere) is not a reply to read


@lru_cache(maxsize=4)  # one reply is read by several parsers (action, belief, think): convert it once
def ascii_view(text: str) -> str:
    """`text` lower-cased with every non-ASCII code point as `?`: same length, so offsets carry over to `text`.

    (Case-insensitive regexes are slow on repetitive text, and `str.lower` may change the length.)
    """
    if text.isascii():
        return text.lower()
    return text.encode("ascii", "replace").decode("ascii").lower()


def tag_blocks(text: str, name: str, limit: int = 16, view: str | None = None) -> list[str]:
    """Contents of the non-overlapping `<name>...</name>` blocks (ASCII case-insensitive), at most `limit` + 1.

    Same pairing as the lazy regex: each block closes at the first closing tag after its opening tag, and the
    search resumes after that closing tag; a missing closing tag ends the walk. Returning `limit + 1` items lets
    the caller see "too many". `view` is `ascii_view(text)` when the caller already has it.
    """
    view = ascii_view(text) if view is None else view
    opening, closing = f"<{name}>", f"</{name}>"
    blocks: list[str] = []
    pos = 0
    while len(blocks) <= limit:
        start = view.find(opening, pos)
        if start < 0:
            break
        end = view.find(closing, start + len(opening))
        if end < 0:
            break
        blocks.append(text[start + len(opening) : end])
        pos = end + len(closing)
    return blocks


def action_lines(text: str, limit: int = 16, view: str | None = None) -> list[str]:
    """The text after `Action:` on lines that start with it (leading blanks allowed), at most `limit` + 1 of them.

    Each `action:` marker is found by one C-level scan; only the blanks before it and, for a line-start marker,
    the rest of its line are looked at. A text with more than `MAX_ACTION_MARKERS` markers returns `limit` + 1
    empty entries, which callers treat as "too many".
    """
    view = ascii_view(text) if view is None else view
    found: list[str] = []
    for seen, match in enumerate(_ACTION_COLON.finditer(view)):
        if seen >= MAX_ACTION_MARKERS:
            return [""] * (limit + 1)
        before = match.start() - 1
        while before >= 0 and view[before] in " \t":
            before -= 1
        if before >= 0 and view[before] != "\n":
            continue
        end = view.find("\n", match.end())
        found.append(text[match.end() :] if end < 0 else text[match.end() : end])
        if len(found) > limit:
            break
    return found
