"""Assembling the program that is analysed and executed: task preamble + the agent's code.

The agent may answer with a whole function (chat style) or only its body (completion style, as in the original
HumanEval). A body is detected by its indented first line and appended right after the preamble (which ends
inside the stub's docstring); a whole function follows the preamble and, being defined later, replaces the stub
while helper functions of the preamble stay available. `code_first_line` lets findings on program lines be
mapped back to lines of the agent's code.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Program:
    source: str
    code_first_line: int  # 1-based program line on which the agent's code starts
    code_line_count: int

    def code_line(self, program_line: int | None) -> int | None:
        """Program line -> 1-based line of the agent's code, or None when the line is outside the code."""
        if program_line is None:
            return None
        line = program_line - self.code_first_line + 1
        return line if 1 <= line <= max(self.code_line_count, 1) else None


def _is_body(code: str) -> bool:
    for line in code.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            return line[:1] in (" ", "\t")
    return False


def assemble(preamble: str, code: str) -> Program:
    """The full program for `code` under `preamble` (see the module docstring)."""
    if not preamble:
        return Program(code, 1, len(code.splitlines()))
    head = preamble if preamble.endswith("\n") else preamble + "\n"
    if not _is_body(code):
        head += "\n\n"
    return Program(head + code, head.count("\n") + 1, len(code.splitlines()))
