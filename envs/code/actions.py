"""Parsing the agent's text into a `run` or `submit` action with the code it carries.

Format (stated in every task prompt): wrap code to try out in `<run>...</run>` and the final solution in
`<submit>...</submit>`; inside a tag the code may be a ```python fenced block or raw text. A run uses its last
block. A submission must commit to one program: several submit tags or fenced blocks with different code make it
ambiguous, an invalid action (never "the last one wins", which would let a response offer every candidate). Only an
explicit submission counts: a `<submit>` tag, or (for single-turn agents) untagged text with a fenced python
block. Untagged text without a fence carries no code, even when it happens to parse as Python (prose such as
"x = 1" or an echoed stub would otherwise be judged as a program): an invalid action. If both tags occur, the
submission wins: a submit is never ignored. Code longer than `MAX_CODE_CHARS` and actions with more than
`MAX_MARKERS` fences or tags are refused (invalid actions, with `problem` saying why). Parsing never raises, runs
in time linear in the text, and every returned code carries its character offset in the action text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from rlvr_gym.sandboxes.python_programs.fences import FENCE, fenced_blocks

MAX_CODE_CHARS = 64_000  # longer code is refused before any parsing (no dataset solution comes close)
MAX_MARKERS = 2_000  # fences or tags per action; more is refused, keeping every scan a few C-speed passes
_OPEN = {kind: re.compile(rf"<{kind}>", re.IGNORECASE) for kind in ("run", "submit")}
_CLOSE = {kind: re.compile(rf"</{kind}>", re.IGNORECASE) for kind in ("run", "submit")}
_NEWLINES = re.compile(r"\n*")
_CODE_LANGS = {"", "python", "py", "python3"}

ActionKind = Literal["run", "submit"]


@dataclass(frozen=True)
class ParsedAction:
    """An action kind plus the extracted code and where that code starts in the original text."""

    kind: ActionKind
    code: str
    offset: int
    problem: str = ""  # why code that was there is not used (too long)

    @property
    def has_code(self) -> bool:
        return bool(self.code.strip())


def tagged(text: str, kind: str, lowered: str | None = None) -> list[tuple[int, int]]:
    """(start, end) of the content of every `<kind>...</kind>` (an unclosed tag runs to the end); linear.

    Tags match case-insensitively. Searching a lower-cased copy is much faster than a case-insensitive regex;
    it is used whenever lower-casing kept every character's position (it does for all but a few code points).
    """
    lowered = text.lower() if lowered is None else lowered
    if len(lowered) == len(text):
        opening, closing = f"<{kind}>", f"</{kind}>"

        def find_open(position: int) -> tuple[int, int] | None:
            at = lowered.find(opening, position)
            return (at, at + len(opening)) if at >= 0 else None

        def find_close(position: int) -> tuple[int, int] | None:
            at = lowered.find(closing, position)
            return (at, at + len(closing)) if at >= 0 else None
    else:

        def find_open(position: int) -> tuple[int, int] | None:
            match = _OPEN[kind].search(text, position)
            return match.span() if match else None

        def find_close(position: int) -> tuple[int, int] | None:
            match = _CLOSE[kind].search(text, position)
            return match.span() if match else None

    spans = []
    position = 0
    while (opened := find_open(position)) is not None:
        closed = find_close(opened[1])
        if closed is None:
            spans.append((opened[1], len(text)))
            break
        spans.append((opened[1], closed[0]))
        position = closed[1]
    return spans


def code_candidates(text: str, base: int = 0) -> list[tuple[str, int]]:
    """Every python fenced block of `text` (or else the raw text), each with its offset shifted by `base`."""
    blocks = [
        (text[start:end], base + start) for lang, start, end in fenced_blocks(text) if lang.lower() in _CODE_LANGS
    ]
    if blocks:
        return blocks
    lead = _NEWLINES.match(text).end()  # a C-speed scan; str.lstrip("\n") is ten times slower on long runs
    return [(text[lead:].rstrip("\n"), base + lead)]


def _committed(candidates: list[tuple[str, int]], kind: ActionKind) -> ParsedAction:
    """The one code a submission commits to; different non-empty candidates make it ambiguous (no code)."""
    distinct = {code.strip() for code, _ in candidates if code.strip()}
    code, offset = candidates[-1]
    if kind == "submit" and len(distinct) > 1:
        return ParsedAction(kind, "", offset, f"{len(distinct)} different code blocks submitted")
    with_code = [(c, o) for c, o in candidates if c.strip()]
    code, offset = with_code[-1] if with_code else (code, offset)
    return _bounded(ParsedAction(kind, code, offset))


def parse_action(text: str) -> ParsedAction:
    """Split an action into run/submit and its code; see the module docstring for the rules."""
    if not isinstance(text, str):
        text = str(text)
    lowered = text.lower()
    if lowered.count(FENCE) > MAX_MARKERS or lowered.count("<submit>") + lowered.count("<run>") > MAX_MARKERS:
        return ParsedAction("submit", "", 0, f"more than {MAX_MARKERS} code fences or tags")
    submits = tagged(text, "submit", lowered)
    if submits:
        return _committed([c for s, e in submits for c in code_candidates(text[s:e], s)], "submit")
    runs = tagged(text, "run", lowered)
    if runs:
        start, end = runs[-1]
        return _committed(code_candidates(text[start:end], start), "run")
    if FENCE in text:
        return _committed(code_candidates(text), "submit")
    return ParsedAction("submit", "", 0, "no <submit> tag or fenced code block" if text.strip() else "")


def _bounded(parsed: ParsedAction) -> ParsedAction:
    if len(parsed.code) <= MAX_CODE_CHARS:
        return parsed
    return ParsedAction(parsed.kind, "", parsed.offset, f"the code is longer than {MAX_CODE_CHARS} characters")


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
