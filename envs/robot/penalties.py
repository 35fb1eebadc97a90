"""Token-level credit for robot programs (spec §7.1): problems mapped to character spans of the response.

Each located problem charges the characters of its program line: a syntax error -1, a rule breach -0.5, a
security finding -0.5, a style finding -0.1, a run that failed with an error -0.6 on the line the error came
from. A state whose run finished but whose check failed has no line of its own, so -0.3 goes to the whole
`task_program`. A trainer adds these to the tokens overlapping each span (`token_penalties` with its
tokenizer's offsets) on top of the scalar reward on the last token. Values are the code env's (PPOCoder-style),
shared through `rlvr_gym.sandboxes.python_programs.token_credit`.
"""

from __future__ import annotations

import ast

from rlvr_gym.sandboxes.python_programs.security import security_findings
from rlvr_gym.sandboxes.python_programs.style import style_findings
from rlvr_gym.sandboxes.python_programs.token_credit import PENALTIES, PenaltySpan, line_spans, token_penalties

from .program import line_of
from .verifier import Judgement

__all__ = ["PenaltySpan", "penalty_spans", "token_penalties"]


def _entry(code: str) -> tuple[int, int] | None:
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    node = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "task_program"), None)
    return (node.lineno, node.end_lineno or node.lineno) if node else None


def penalty_spans(judgement: Judgement) -> list[PenaltySpan]:
    """Spans in the response text (offsets include where the code starts) with the penalty of each problem."""
    code = judgement.code
    if code is None:
        return []
    lines = line_spans(code)
    shift = judgement.offset

    def span(line: int | None, kind: str, rule: str, message: str) -> PenaltySpan | None:
        if line is None or not 1 <= line <= len(lines):
            return None
        start, end = lines[line - 1]
        return PenaltySpan(shift + start, shift + end, PENALTIES[kind], kind, rule, message[:200])

    found: list[PenaltySpan | None] = []
    for problem in judgement.problems:
        kind = "syntax" if "SyntaxError" in problem else "security"
        found.append(span(line_of(problem), kind, "robot-rule" if kind == "security" else "syntax", problem))
    if judgement.problems:
        return [s for s in found if s is not None]
    found += [span(f.line, "style", f.rule, f.message) for f in style_findings(code)[0] if f.rule != "F821"]
    found += [span(f.line, "security", f.rule, f.message) for f in security_findings(ast.parse(code))]
    entry = _entry(code)
    for outcome, passed in zip(judgement.outcomes, judgement.passes, strict=False):
        if passed:
            continue
        if outcome.line is not None and not outcome.clean:
            found.append(span(outcome.line, "runtime", outcome.end, outcome.robot_error or outcome.detail))
        elif entry is not None:
            start, end = lines[entry[0] - 1][0], lines[min(entry[1], len(lines)) - 1][1]
            found.append(PenaltySpan(shift + start, shift + end, PENALTIES["test"], "test", "check", "a check failed"))
    return [s for s in found if s is not None]
