"""Token-level credit: penalties on character spans of a response, which a trainer adds to the tokens they cover.

Shared because the code and robot families charge the same problems the same way (values are design choices,
PPOCoder-style: syntax error -1, runtime error -0.6, failed test -0.3, security finding -0.5, style finding
-0.1); each family decides which span a problem occupies. A trainer maps the spans to tokens with its tokenizer's
offsets (`return_offsets_mapping`, see `token_penalties`) on top of the scalar reward on the last token.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

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


def line_spans(code: str) -> list[tuple[int, int]]:
    """(start, end) character offsets of each line of `code`, line breaks excluded (one empty span for "")."""
    spans, position = [], 0
    for line in code.splitlines(keepends=True):
        spans.append((position, position + len(line.rstrip("\r\n"))))
        position += len(line)
    return spans or [(0, 0)]
