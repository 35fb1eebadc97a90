"""Token-level credit: findings and errors mapped to character spans of the action text.

A trainer maps the spans to tokens with its tokenizer's offsets (`return_offsets_mapping`) and adds each
penalty to the tokens of the span, on top of the scalar reward on the last token (see docs/code-env.md).
Penalty values are design choices, PPOCoder-style: syntax error -1, runtime error -0.6, failed test -0.3,
security finding -0.5, style finding -0.1. A failed test has no line of its own (the failing assert is hidden),
so it is charged to the entry-point function's lines when the agent wrote them, else to all of its code.
"""

from __future__ import annotations

import ast
from dataclasses import asdict, dataclass

from .findings import Finding
from .verifier import CodeReport

PENALTIES: dict[str, float] = {"syntax": -1.0, "runtime": -0.6, "test": -0.3, "security": -0.5, "style": -0.1}


@dataclass(frozen=True)
class PenaltySpan:
    start: int  # character offset in the action text (inclusive)
    end: int  # exclusive
    penalty: float
    kind: str
    rule: str
    message: str

    def as_dict(self) -> dict:
        return asdict(self)


def token_penalties(spans: list[PenaltySpan], token_offsets: list[tuple[int, int]]) -> list[float]:
    """Per-token penalty: the sum over spans overlapping each token's (start, end) character range.

    `token_offsets` are the action's token offsets in the same text the spans refer to (a HF fast tokenizer's
    `return_offsets_mapping`); tokens without characters (start == end) get nothing.
    """
    values = []
    for start, end in token_offsets:
        hit = sum(s.penalty for s in spans if start < end and start < s.end and s.start < end)
        values.append(float(hit))
    return values


def _line_spans(code: str) -> list[tuple[int, int]]:
    spans, position = [], 0
    for line in code.splitlines(keepends=True):
        spans.append((position, position + len(line.rstrip("\r\n"))))
        position += len(line)
    return spans or [(0, 0)]


def _entry_lines(report: CodeReport) -> tuple[int, int] | None:
    """Code-line range of the (last) entry-point definition, when it lies in the agent's code."""
    try:
        tree = ast.parse(report.program.source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    found = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == report.entry_point:
            first, last = report.program.code_line(node.lineno), report.program.code_line(node.end_lineno)
            if first is not None and last is not None:
                found = (first, last)
    return found


def penalty_map(
    report: CodeReport, code: str, offset: int = 0, penalties: dict[str, float] | None = None
) -> list[PenaltySpan]:
    """Spans (in the action text: `offset` is where `code` starts there) with the penalty for each finding."""
    values = {**PENALTIES, **(penalties or {})}
    lines = _line_spans(code)
    whole = (lines[0][0], lines[-1][1])
    entry = _entry_lines(report)
    spans: list[PenaltySpan] = []
    for finding in report.findings:
        span = _span_of(finding, report, lines, entry, whole)
        if span is None:
            continue
        start, end = span
        spans.append(
            PenaltySpan(offset + start, offset + end, values[finding.kind], finding.kind, finding.rule, finding.message)
        )
    return spans


def _span_of(
    finding: Finding,
    report: CodeReport,
    lines: list[tuple[int, int]],
    entry: tuple[int, int] | None,
    whole: tuple[int, int],
) -> tuple[int, int] | None:
    line = report.program.code_line(finding.line)
    if line is not None and line <= len(lines):
        return lines[line - 1]
    if finding.kind == "test" or (finding.kind in ("runtime", "syntax") and finding.line is None):
        if entry is not None and entry[1] <= len(lines):
            return lines[entry[0] - 1][0], lines[entry[1] - 1][1]
        return whole
    return None  # a style/security finding in the task's own preamble is not the agent's doing
