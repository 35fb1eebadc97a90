"""Parsing the agent's text into a `run` or `submit` action with the code it carries.

Format (stated in every task prompt): wrap code to try out in `<run>...</run>` and the final solution in
`<submit>...</submit>`; inside a tag the code may be a ```python fenced block (the last block is used) or raw
text. Text with no tag counts as a submission when it has a fenced python block or is itself Python with at least
one statement beyond a bare expression (so single-turn agents and plain completions still work); untagged prose
carries no code and is an invalid action. If both tags occur, the submission wins: a submit is never ignored. Parsing never raises, and every
returned code carries its character offset in the action text, so findings can be mapped back to spans.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass
from typing import Literal

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_TAGS = {kind: re.compile(rf"<{kind}>(.*?)(?:</{kind}>|\Z)", re.DOTALL | re.IGNORECASE) for kind in ("run", "submit")}
_CODE_LANGS = {"", "python", "py", "python3"}

ActionKind = Literal["run", "submit"]


@dataclass(frozen=True)
class ParsedAction:
    """An action kind plus the extracted code and where that code starts in the original text."""

    kind: ActionKind
    code: str
    offset: int

    @property
    def has_code(self) -> bool:
        return bool(self.code.strip())


def extract_code(text: str, base: int = 0) -> tuple[str, int]:
    """The last python fenced block of `text` (or the raw text), with its offset; `base` shifts the offset."""
    blocks = [m for m in _FENCE.finditer(text) if m.group(1).lower() in _CODE_LANGS]
    if blocks:
        last = blocks[-1]
        return last.group(2), base + last.start(2)
    stripped = text.strip("\n")
    lead = len(text) - len(text.lstrip("\n"))
    return stripped, base + lead


def parse_action(text: str) -> ParsedAction:
    """Split an action into run/submit and its code; see the module docstring for the rules."""
    if not isinstance(text, str):
        text = str(text)
    for kind in ("submit", "run"):
        matches = list(_TAGS[kind].finditer(text))
        if matches:
            last = matches[-1]
            code, offset = extract_code(last.group(1), last.start(1))
            return ParsedAction(kind, code, offset)  # type: ignore[arg-type]
    code, offset = extract_code(text)
    if "```" not in text and not _looks_like_code(code):
        return ParsedAction("submit", "", offset)
    return ParsedAction("submit", code, offset)


def _looks_like_code(text: str) -> bool:
    try:
        tree = ast.parse(textwrap.dedent(text))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return any(not isinstance(node, ast.Expr) for node in tree.body)


FORMAT_INSTRUCTIONS = (
    "To test code before answering, reply with <run>```python\n...\n```</run>; the code is executed and you see "
    "its stdout and stderr. When you are done, reply with <submit>```python\n...\n```</submit> containing the full "
    "solution; the submission is final and is checked against hidden tests."
)


def format_submission(code: str) -> str:
    """The canonical submit action for `code` (used for reference actions)."""
    return f"<submit>\n```python\n{code.rstrip()}\n```\n</submit>"


def format_run(code: str) -> str:
    return f"<run>\n```python\n{code.rstrip()}\n```\n</run>"
