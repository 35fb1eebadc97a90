"""Fenced answer blocks (```tag ... ```): the one answer format of the AZR envs, parsed in one linear pass.

A block opens with a line whose stripped text is ``` followed by a tag (`python`, `input`, `inputs`, `output`,
`message`) and closes at the next line whose stripped text is exactly ```. Untagged fences and unterminated blocks
are ignored. Callers demand exactly one block per tag they need: two blocks of one tag are an ambiguous answer
(every-candidate-at-once), never "the first one wins".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_BLOCK_CHARS = 20_000  # a program or literal longer than this is refused, not truncated
MAX_ANSWER_CHARS = 64_000  # a longer answer is refused whole: parsing stays bounded on 1 MB adversarial text


@dataclass(frozen=True)
class Blocks:
    """The tagged blocks of one answer, in order."""

    items: list[tuple[str, str]]
    too_long: bool = False

    def all(self, tag: str) -> list[str]:
        return [body for t, body in self.items if t == tag]

    def one(self, tag: str) -> str | None:
        """The single block with `tag`, or None when there is none or more than one."""
        found = self.all(tag)
        return found[0] if len(found) == 1 else None

    def problem(self, *tags: str) -> str | None:
        """Why the answer does not hold exactly one block of each tag, or None."""
        if self.too_long:
            return f"the answer is longer than {MAX_ANSWER_CHARS} characters"
        for tag in tags:
            count = len(self.all(tag))
            if count != 1:
                return f"expected exactly one ```{tag} block, found {count}"
        return None


_OPEN = re.compile(r"^[ \t]*```[ \t]*([A-Za-z_][A-Za-z0-9_]{0,30})[ \t]*$", re.MULTILINE)
_CLOSE = re.compile(r"^[ \t]*```[ \t]*$", re.MULTILINE)


def fenced_blocks(text: str) -> Blocks:
    """All complete tagged blocks of `text` (linear: each search resumes where the last one ended)."""
    items: list[tuple[str, str]] = []
    if len(text) > MAX_ANSWER_CHARS:
        return Blocks(items, too_long=True)
    pos = 0
    while text.find("```", pos) >= 0:
        opener = _OPEN.search(text, pos)
        if opener is None:
            break
        closer = _CLOSE.search(text, opener.end())
        if closer is None:
            break  # an unterminated block runs to the end: nothing after it can be complete
        body = text[opener.end() + 1 : closer.start()]
        if len(body) <= MAX_BLOCK_CHARS:
            items.append((opener.group(1).lower(), body.removesuffix("\n")))
        pos = closer.end()
    return Blocks(items)


def fence(tag: str, body: str) -> str:
    """One block in the answer format (used by prompts, oracles and wrong answers)."""
    return f"```{tag}\n{body}\n```"
