"""Fenced code blocks in a model's response: where each ```lang ... ``` block's body starts and ends.

Shared because the code and robot families both take a candidate program out of a markdown-style response and
must locate it to the character (token-level penalties are charged on those offsets).
"""

from __future__ import annotations

import re

FENCE = "```"
_LANG = re.compile(r"[ \t]*([A-Za-z0-9_+-]*)")


def fenced_blocks(text: str) -> list[tuple[str, int, int]]:
    """(language, body start, body end) of every fenced block, in order; one forward pass over `text`.

    A block opens with three backticks and an info string up to the end of the line, and closes at the next
    three backticks (or the end of the text). Every search starts where the previous one stopped, so the cost
    is linear in the text whatever it holds (runs of backticks or newlines included).
    """
    blocks = []
    position = 0
    while True:
        start = text.find(FENCE, position)
        if start < 0:
            return blocks
        line_end = text.find("\n", start + len(FENCE))
        if line_end < 0:  # no newline after this fence, hence none after any later one either
            return blocks
        lang = _LANG.match(text, start + len(FENCE), line_end)
        body = line_end + 1
        close = text.find(FENCE, body)
        end = close if close >= 0 else len(text)
        blocks.append((lang.group(1) if lang else "", body, end))
        if close < 0:
            return blocks
        position = close + len(FENCE)
