"""Find the final answer in a model's output: `\\boxed{}`, `<answer>` tags, or an answer phrase on the last lines.

Extraction is bounded work on any input (a 1 MB output costs a few C-level string scans), returns short spans
only, and refuses to guess: conflicting boxed answers, an empty box or prose without an answer give no answer.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from .numeric import parse_number

MultiplePolicy = Literal["reject", "last", "first"]

_BOX_COMMANDS = ("\\boxed", "\\fbox")
_ANSWER_OPEN, _ANSWER_CLOSE = "<answer>", "</answer>"
_PHRASE = re.compile(
    r"\banswer\s*(?:is\b\s*[:=]?|[:=])\s*(?P<ans>[^\n]+)$|^\s*####\s*(?P<hash>[^\n]+)$",
    re.IGNORECASE | re.MULTILINE,
)
_PHRASE_END = re.compile(r"\.\s|\s(?:because|since|as|which|so|for|when|if|given|where)\b", re.IGNORECASE)
_TEXT_WRAP = re.compile(r"\\(?:text|textbf|mathrm|mbox)\{([^{}]*)\}")
_MATH_LINE = re.compile(r"^(?:\$[^$]+\$|\\\([^\n]+\\\)|\\\[[^\n]+\\\])$")
_TAIL_CHARS = 4000


@dataclass(frozen=True)
class Extraction:
    """The extracted answer span (None when none), how it was found, and why not when it wasn't."""

    answer: str | None
    method: str
    reason: str = ""


def _balanced(text: str, start: int, max_chars: int) -> str | None:
    """Contents of the brace group opening at text[start] == '{', or None if unclosed within max_chars."""
    depth = 0
    end = min(len(text), start + max_chars + 2)
    for pos in range(start, end):
        char = text[pos]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return text[start + 1 : pos]
    return None


def boxed_spans(text: str, max_chars: int) -> list[str | None]:
    """Every `\\boxed{...}`/`\\fbox{...}` content in order; None for one unclosed or longer than max_chars."""
    spans: list[tuple[int, str | None]] = []
    for command in _BOX_COMMANDS:
        pos = text.find(command)
        while pos != -1:
            cursor = pos + len(command)
            while cursor < len(text) and text[cursor] == " ":
                cursor += 1
            if cursor < len(text) and text[cursor] == "{":
                spans.append((pos, _balanced(text, cursor, max_chars)))
            elif cursor > pos + len(command) and cursor < len(text):  # `\boxed 5`
                token = re.match(r"[^\s$]+", text[cursor : cursor + max_chars + 1])
                spans.append((pos, token.group(0) if token and len(token.group(0)) <= max_chars else None))
            pos = text.find(command, pos + 1)
    return [span for _, span in sorted(spans, key=lambda item: item[0])]


def _clean(span: str) -> str:
    span = span.strip().strip("*").strip()
    if len(span) >= 2 and span.startswith("$") and span.endswith("$"):
        span = span.strip("$").strip()
    return span.rstrip(".").strip()


def canonical_key(span: str) -> str:
    """Spelling-insensitive key used to tell whether two boxed answers say the same thing."""
    span = _TEXT_WRAP.sub(lambda m: m.group(1), unicodedata.normalize("NFKC", span))
    return re.sub(r"\s+|\\[,;! ]|\\left|\\right", "", span).replace("dfrac", "frac")


def _from_boxes(spans: list[str | None], policy: MultiplePolicy, same: Callable[[str, str], bool]) -> Extraction:
    if any(span is None for span in spans):
        return Extraction(None, "boxed", "a \\boxed{} answer is unclosed or too long")
    answers = [_clean(span) for span in spans if span is not None]
    answers = [a for a in answers if a]
    if not answers:
        return Extraction(None, "boxed", "the \\boxed{} answer is empty")
    if policy == "last":
        return Extraction(answers[-1], "boxed")
    if policy == "first":
        return Extraction(answers[0], "boxed")
    distinct: list[str] = []
    for answer in answers:
        if not any(same(answer, seen) for seen in distinct):
            distinct.append(answer)
    if len(distinct) > 1:
        return Extraction(None, "boxed", f"{len(distinct)} different \\boxed{{}} answers")
    return Extraction(answers[-1], "boxed")


def _from_tags(text: str, max_chars: int) -> Extraction | None:
    start = text.rfind(_ANSWER_OPEN)
    if start == -1:
        return None
    end = text.find(_ANSWER_CLOSE, start)
    content = text[start + len(_ANSWER_OPEN) : end if end != -1 else len(text)]
    if end == -1 and len(content) > max_chars:
        return Extraction(None, "answer_tag", "the <answer> tag is not closed")
    content = _clean(content)
    phrased = _from_last_lines(content, max_chars) if len(content) > max_chars or "answer" in content.lower() else None
    if phrased is not None and phrased.answer is not None:
        return Extraction(phrased.answer, "answer_tag")
    if not content:
        return Extraction(None, "answer_tag", "the <answer> tag is empty")
    if len(content) > max_chars:
        return Extraction(None, "answer_tag", "the <answer> tag content is too long")
    return Extraction(content, "answer_tag")


def _looks_like_answer(raw: str) -> bool:
    """A bare line that is a number or a delimited math span, not prose that happens to end the output."""
    return parse_number(_clean(raw)) is not None or bool(_MATH_LINE.match(raw))


def _from_last_lines(text: str, max_chars: int) -> Extraction:
    tail = text[-_TAIL_CHARS:]
    for found in reversed(list(_PHRASE.finditer(tail))):
        if found.group("ans") is not None:
            answer = _clean(_PHRASE_END.split(found.group("ans"), maxsplit=1)[0])
        elif _looks_like_answer(found.group("hash").strip().rstrip(".")):
            answer = _clean(found.group("hash"))
        else:
            continue
        if answer and len(answer) <= max_chars:
            return Extraction(answer, "answer_phrase")
        break
    lines = [line for line in tail.splitlines() if line.strip()]
    if lines:
        raw = lines[-1].strip().strip("*").strip().rstrip(".").strip()
        if raw and len(raw) <= max_chars and _looks_like_answer(raw):
            return Extraction(_clean(raw), "final_line")
    return Extraction(None, "none", "no final answer found")


def extract_answer(
    text: str,
    *,
    max_chars: int = 300,
    max_boxes: int = 32,
    multiple: MultiplePolicy = "reject",
    same: Callable[[str, str], bool] | None = None,
) -> Extraction:
    """The final answer span of `text`: boxed first, then `<answer>` tags, then an answer phrase or bare last line.

    `same(a, b)` decides whether two boxed answers agree (default: equal canonical spelling); under the default
    `multiple="reject"` policy disagreeing boxes are no answer, so hedging with several boxes never pays.
    """
    if not isinstance(text, str):
        text = text.decode("utf-8", "replace") if isinstance(text, bytes | bytearray) else str(text)
    same = same or (lambda a, b: canonical_key(a) == canonical_key(b))
    box_count = sum(text.count(command) for command in _BOX_COMMANDS)
    if box_count > max_boxes:
        return Extraction(None, "boxed", f"too many \\boxed{{}} answers ({box_count})")
    if box_count:
        spans = boxed_spans(text, max_chars)
        if spans:
            return _from_boxes(spans, multiple, same)
    tagged = _from_tags(text, max_chars)
    if tagged is not None:
        return tagged
    return _from_last_lines(text, max_chars)
