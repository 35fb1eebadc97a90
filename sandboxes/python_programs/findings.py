"""A finding: one problem located on a line of a candidate program (syntax, style, security, runtime, test)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

FindingKind = Literal["syntax", "style", "security", "runtime", "test"]


@dataclass(frozen=True)
class Finding:
    kind: FindingKind
    rule: str
    message: str
    line: int | None  # 1-based line of the *program* (preamble + code); None when it has no location
    col: int = 0
