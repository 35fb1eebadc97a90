"""The one extraction rule: which answers a response commits to.

A response commits to every non-empty `\\boxed{...}` (or `\\fbox{...}`) it writes OUTSIDE of
  - reasoning blocks: everything before the last `</think>` (also `</thinking>`, `</reasoning>`), and everything
    after an opening `<think>` that is never closed;
  - code: fenced blocks (```), unterminated fences up to the end, and inline `code` spans;
  - quoted examples: Markdown block quotes (lines starting with `>`) and text in double quotes on one line
    ("..." or “...”);
  - verbatim copies of the task's own prompt text (an echoed prompt commits to nothing).
The final answer is the last committed box. If the committed boxes do not all state the same answer, the
response is ambiguous and invalid (never a pass); a box nested in a box belongs to the outer one.

Every step is a C-level string scan or a regex without nested quantifiers (linear time). Reasoning blocks are cut
first with `rfind`/`find`, so they may be long; the rest of the response (the answer part) is invalid when over
`MAX_RESPONSE_CHARS`, as are a box longer than `max_chars` and more than `max_boxes` boxes: a 1 MB response of
newlines, backticks, braces or repeated `\\boxed{` costs a few milliseconds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

BOX_COMMANDS = ("\\boxed", "\\fbox")
MAX_RESPONSE_CHARS = 100_000  # outside reasoning blocks; longer answer parts are invalid, not scanned
_THINK_TAGS = ("think", "thinking", "reasoning")
_BARE_TOKEN = re.compile(r" +([^\s$}]+)")
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_BLOCK_QUOTE = re.compile(r"^[ \t]*>[^\n]*", re.MULTILINE)
_QUOTED = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”")


@dataclass(frozen=True)
class Committed:
    """The boxed answers a response commits to, in order; `error` says why there is no usable answer."""

    answers: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def final(self) -> str | None:
        return self.answers[-1] if self.answers and self.error is None else None


def outside_reasoning(text: str) -> str:
    """The text after the last closed reasoning block, cut at a reasoning block that is never closed."""
    for tag in _THINK_TAGS:
        close = text.rfind(f"</{tag}>")
        if close != -1:
            text = text[close + len(tag) + 3 :]
        opened = text.find(f"<{tag}>")
        if opened != -1:
            text = text[:opened]
    return text


def outside_code_and_quotes(text: str) -> str:
    """Drop fenced code (an unterminated fence runs to the end), inline code, block quotes and quoted text."""
    if "```" in text:
        text = "\n".join(text.split("```")[0::2])
    if "`" in text:
        text = _INLINE_CODE.sub(" ", text)
    if ">" in text:
        text = _BLOCK_QUOTE.sub("", text)
    if '"' in text or "“" in text:
        text = _QUOTED.sub(" ", text)
    return text


def without_echoes(text: str, echoes: Sequence[str]) -> str:
    for echo in sorted((e for e in echoes if e and e.strip()), key=len, reverse=True):
        text = text.replace(echo, "\n")
    return text


def _closing_brace(text: str, start: int, max_chars: int) -> int:
    """Index of the brace closing text[start] == '{' within max_chars, else -1 (bounded scan)."""
    depth = 0
    end = min(len(text), start + max_chars + 2)
    for pos in range(start, end):
        char = text[pos]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return pos
    return -1


def boxed_spans(text: str, max_chars: int = 300) -> tuple[list[str], str | None]:
    """Contents of the top-level boxes in order (nested boxes stay inside their outer box's content)."""
    starts = sorted((pos, command) for command in BOX_COMMANDS for pos in _find_all(text, command))
    spans: list[str] = []
    covered_until = -1
    for pos, command in starts:
        if pos < covered_until:
            continue
        cursor = pos + len(command)
        if text.startswith("{", cursor):
            close = _closing_brace(text, cursor, max_chars)
            if close == -1:
                return spans, "a \\boxed{} answer is unclosed or too long"
            spans.append(text[cursor + 1 : close])
            covered_until = close
        elif text.startswith(" ", cursor):  # `\boxed 7`
            token = _BARE_TOKEN.match(text, cursor, cursor + max_chars + 8)
            if token and len(token.group(1)) <= max_chars:
                spans.append(token.group(1))
                covered_until = token.end()
    return spans, None


def _find_all(text: str, needle: str) -> list[int]:
    found, pos = [], text.find(needle)
    while pos != -1:
        found.append(pos)
        pos = text.find(needle, pos + 1)
    return found


def committed_answers(
    response: str,
    *,
    echoes: Sequence[str] = (),
    max_chars: int = 300,
    max_boxes: int = 32,
    max_response_chars: int = MAX_RESPONSE_CHARS,
) -> Committed:
    """Apply the extraction rule (module docstring); answers are raw box contents, stripped."""
    text = outside_reasoning(without_echoes(response, echoes))
    if len(text) > max_response_chars:
        return Committed(error=f"the answer part of the response is over {max_response_chars} characters")
    text = outside_code_and_quotes(text)
    count = sum(text.count(command) for command in BOX_COMMANDS)
    if count > max_boxes:
        return Committed(error=f"too many \\boxed{{}} answers ({count})")
    spans, error = boxed_spans(text, max_chars)
    if error:
        return Committed(error=error)
    answers = [span.strip() for span in spans if span.strip()]
    if not answers:
        return Committed(error="no final answer in \\boxed{}" if not spans else "the \\boxed{} answer is empty")
    return Committed(answers=answers)
