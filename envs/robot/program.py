"""Reading a robot program out of a response, and the static policy every program must meet before it runs.

Extraction: the one ```python block of the response (several different blocks are ambiguous: invalid), else the
whole text when it defines `task_program`. Linear in the text; oversized responses are refused unread.

Policy (checked here, in the trusted parent, on the AST, and again in the sandbox): the program sees the world
only through the robot API. So it may import only time/math/random/re (in the sandbox: facades of chosen names
from the jail, `rlvr_gym.sandboxes.jail`: a virtual clock and a seeded random), defines no class, and meets the
jail's source rules: no name starting with two underscores, no attribute starting with one (no `__globals__`,
`__closure__`, `__builtins__`...), no `.format`/`.format_map` (format strings walk attributes), no frame, code
or traceback attributes (`gi_frame`, `f_back`, `tb_frame`... lead from a generator back into the harness's
frames), no bare `except:` (it would swallow the run timer). In the sandbox it also gets only the jail's pure
builtins (no getattr, eval, exec, open, globals, vars, type, id, hash). The verdict never depends on what the
program says about itself: the parent replays the call log on its own simulator.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from rlvr_gym.sandboxes.jail import source_problems
from rlvr_gym.sandboxes.python_programs.fences import fenced_blocks

MAX_RESPONSE_CHARS = 200_000
MAX_CODE_CHARS = 20_000
ALLOWED_IMPORTS = frozenset({"time", "math", "random", "re"})
ENTRY = "task_program"
_LANGS = {"", "python", "py", "python3"}


@dataclass(frozen=True)
class Extracted:
    code: str | None
    problem: str = ""
    offset: int = 0  # where `code` starts in the response (for token-level penalties)


def extract(text: str) -> Extracted:
    """The program a response commits to, or why there is none."""
    if not isinstance(text, str):
        return Extracted(None, "the response is not text")
    if len(text) > MAX_RESPONSE_CHARS:
        return Extracted(None, f"response longer than {MAX_RESPONSE_CHARS} characters")
    blocks = [(start, end) for lang, start, end in fenced_blocks(text) if lang.lower() in _LANGS]
    distinct = {text[a:b].strip() for a, b in blocks if text[a:b].strip()}
    if len(distinct) > 1:
        return Extracted(None, f"{len(distinct)} different code blocks: commit to one program")
    if distinct:
        start, end = next((a, b) for a, b in blocks if text[a:b].strip())
    elif "```" not in text and f"def {ENTRY}" in text:
        start, end = 0, len(text)
    else:
        return Extracted(None, f"no program: answer with `def {ENTRY}():` in a ```python block")
    body = text[start:end]
    code = body.strip()
    if len(code) > MAX_CODE_CHARS:
        return Extracted(None, f"program longer than {MAX_CODE_CHARS} characters")
    return Extracted(code + "\n", offset=start + len(body) - len(body.lstrip()))


def parse(code: str) -> ast.Module | str:
    """The AST, or the syntax error as text (starting "line N:" when it has a line)."""
    try:
        return ast.parse(code)
    except SyntaxError as exc:
        return (f"line {exc.lineno}: " if exc.lineno else "") + f"SyntaxError: {exc.msg}"[:300]
    except (ValueError, RecursionError, MemoryError) as exc:
        return f"{type(exc).__name__}: {exc}"[:300]


def line_of(message: str) -> int | None:
    """The program line a policy or syntax message starts with ("line N: ..."), if any."""
    head = message.split(":", 1)[0]
    return int(head[5:]) if head.startswith("line ") and head[5:].isdigit() else None


def violations(tree: ast.Module) -> list[str]:
    """Every policy breach in the program (empty when it may run)."""
    found: list[str] = []
    if not any(isinstance(node, ast.FunctionDef) and node.name == ENTRY for node in tree.body):
        found.append(f"no top-level `def {ENTRY}():`")
    found += source_problems(tree)
    for node in ast.walk(tree):
        line = getattr(node, "lineno", "?")
        if isinstance(node, ast.Import):
            found += [f"line {line}: import of {a.name}" for a in node.names if a.name not in ALLOWED_IMPORTS]
        elif isinstance(node, ast.ImportFrom) and (node.level or node.module not in ALLOWED_IMPORTS):
            found.append(f"line {line}: import from {node.module}")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name.startswith("__"):
            found.append(f"line {line}: definition {node.name}")
        elif isinstance(node, ast.ClassDef):
            found.append(f"line {line}: classes are not available to robot programs")
        elif isinstance(node, ast.arg) and node.arg.startswith("__"):
            found.append(f"line {line}: argument {node.arg}")
    return found[:20]
