"""Token-level credit for code actions: findings and errors mapped to character spans of the action text.

The penalty values, the span type and the span-to-token mapping are shared with the robot family
(`rlvr_gym.sandboxes.python_programs.token_credit`, see docs/code-env.md). A failed test has no line of its own
(the failing assert is hidden), so it is charged to the entry-point function's lines when the agent wrote them,
else to all of its code.
"""

from __future__ import annotations

import ast

from rlvr_gym.sandboxes.python_programs.findings import Finding
from rlvr_gym.sandboxes.python_programs.token_credit import PENALTIES, PenaltySpan, line_spans

from .verifier import CodeReport


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
    lines = line_spans(code)
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
