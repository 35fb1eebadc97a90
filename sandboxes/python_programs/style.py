"""Style findings: ruff on the program text through stdin (a local subprocess; ruff parses, never executes).

Rules are fixed here (`--isolated`, pycodestyle E/W plus pyflakes F, line length 100) so scores do not depend on
the project's or the user's ruff configuration; that rule choice is a design choice. When no ruff binary is
found, a small built-in checker covers the most common pycodestyle/pyflakes-like findings, and the result says
which checker ran (`tool`).
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache

from .findings import Finding

RUFF_ARGS = (
    "check",
    "--isolated",
    "--select",
    "E,W,F",
    "--line-length",
    "100",
    "--output-format",
    "json",
    "--no-cache",
)
MAX_LINE = 100


@lru_cache(maxsize=1)
def ruff_binary() -> str | None:
    """The ruff executable next to this interpreter, else on PATH, else None."""
    local = os.path.join(sysconfig.get_path("scripts"), "ruff")
    if os.access(local, os.X_OK):
        return local
    beside = os.path.join(os.path.dirname(sys.executable), "ruff")
    if os.access(beside, os.X_OK):
        return beside
    return shutil.which("ruff")


def _finding(item: dict) -> Finding | None:
    code = item.get("code") or "E999"
    if code.startswith("E9") or code == "invalid-syntax":
        return None  # syntax errors are the syntax component's business
    location = item.get("location") or {}
    return Finding("style", code, item.get("message", ""), location.get("row"), location.get("column", 1) - 1)


def _ruff_many(sources: Sequence[str], binary: str) -> list[list[Finding]] | None:
    """One ruff process for a whole batch (files in a private temp dir), or None if ruff failed."""
    try:
        with tempfile.TemporaryDirectory(prefix="rlvr-style-") as folder:
            paths = []
            for index, source in enumerate(sources):
                path = os.path.join(folder, f"s{index}.py")
                with open(path, "w", encoding="utf-8", errors="surrogatepass") as handle:
                    handle.write(source)
                paths.append(path)
            done = subprocess.run([binary, *RUFF_ARGS, *paths], capture_output=True, timeout=120, check=False)
            items = json.loads(done.stdout.decode() or "[]")
    except (OSError, subprocess.SubprocessError, ValueError, UnicodeError):
        return None
    if done.returncode not in (0, 1):
        return None
    found: list[list[Finding]] = [[] for _ in sources]
    for item in items:
        name = os.path.basename(str(item.get("filename", "")))
        finding = _finding(item)
        if finding is not None and name.startswith("s") and name[1:-3].isdigit():
            found[int(name[1:-3])].append(finding)
    return [sorted(f, key=lambda x: (x.line or 0, x.col)) for f in found]


def _builtin(source: str) -> list[Finding]:
    findings: list[Finding] = []
    for number, line in enumerate(source.splitlines(), start=1):
        if len(line) > MAX_LINE:
            findings.append(Finding("style", "E501", f"line too long ({len(line)} > {MAX_LINE})", number, MAX_LINE))
        if line != line.rstrip():
            findings.append(Finding("style", "W291", "trailing whitespace", number, len(line.rstrip())))
        if line.startswith("\t"):
            findings.append(Finding("style", "W191", "indentation contains tabs", number))
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return findings
    for node in ast.walk(tree):
        if isinstance(node, ast.ExceptHandler) and node.type is None:
            findings.append(Finding("style", "E722", "do not use bare `except`", node.lineno, node.col_offset))
        elif (
            isinstance(node, ast.Compare)
            and any(isinstance(c, ast.Constant) and c.value is None for c in node.comparators)
            and any(isinstance(op, (ast.Eq, ast.NotEq)) for op in node.ops)
        ):
            findings.append(Finding("style", "E711", "comparison to None", node.lineno, node.col_offset))
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda):
            findings.append(Finding("style", "E731", "do not assign a lambda expression", node.lineno, node.col_offset))
    return sorted(findings, key=lambda f: (f.line or 0, f.col))


_cache: OrderedDict[tuple[str, bool], tuple[list[Finding], str]] = OrderedDict()
_cache_lock = threading.Lock()
_CACHE_SIZE = 4096


def style_findings_many(sources: Sequence[str], *, use_ruff: bool = True) -> list[tuple[list[Finding], str]]:
    """(findings, tool) per program; tool is "ruff" or "builtin". Cached by text: same text => same findings."""
    with _cache_lock:
        known = {s: _cache[(s, use_ruff)] for s in sources if (s, use_ruff) in _cache}
    missing = [s for s in dict.fromkeys(sources) if s not in known]
    if missing:
        binary = ruff_binary() if use_ruff else None
        batch = _ruff_many(missing, binary) if binary else None
        for index, source in enumerate(missing):
            known[source] = (batch[index], "ruff") if batch is not None else (_builtin(source), "builtin")
        with _cache_lock:
            _cache.update({(s, use_ruff): known[s] for s in missing})
            while len(_cache) > _CACHE_SIZE:
                _cache.popitem(last=False)
    return [(list(known[s][0]), known[s][1]) for s in sources]


def style_findings(source: str, *, use_ruff: bool = True) -> tuple[list[Finding], str]:
    return style_findings_many([source], use_ruff=use_ruff)[0]
