"""RoboEval-form programs to programs our sandbox runs with the original runner's meaning (evaluation only).

The original runner (spec §2.3) rewrites a program's text before running it: every double-quoted string literal
is lower-cased, `task_program()` becomes `task_program(robot)`, each API name followed by `(` gets the prefix
`robot.` (plain substring replacement, so `essay(` becomes `essrobot.say(`), `time.sleep(1)` becomes
`time.sleep(0.01)`, and `task_program(robot)` is appended; `sys` and `time` are imported first and `__name__`
is "__main__". `convert_program` applies the same rewriting and then adapts the result to our jail without
changing what it does: the sandbox job provides `robot` (the API as attributes) and calls `task_program()`
itself (so the appended call is dropped and `robot` becomes the parameter's default), `time` is imported where
the program uses it without importing it, `except:` becomes `except Exception:` (the jail's timer must not be
swallowed; the original's timeout is a kill, never an exception), and `"...".format(...)` with a literal
template becomes the equivalent f-string (the jail refuses `.format`, which can walk attributes).

Forms accepted: a whole program, a completion body (what follows the prompt's `def task_program():`), a chat
answer with a fenced block, and a program already in the rewritten form (`def task_program(robot):`).
What stays unconvertible is listed in docs/robot.md (classes, modules other than time/math/random/re, `sys`,
builtins outside the jail, `.format` on a template that is not a literal).
"""

from __future__ import annotations

import ast
import io
import re
import string
import tokenize

from rlvr_gym.sandboxes.python_programs.fences import fenced_blocks

from .replay import API

ENTRY = re.compile(r"^\s*def\s+task_program\s*\(", re.MULTILINE)
REWRITTEN = re.compile(r"^def\s+task_program\s*\(\s*robot\s*\)", re.MULTILINE)
APPENDED = re.compile(r"^task_program\(robot\)\s*\Z", re.MULTILINE)
BARE_CALL = re.compile(r"(?<!robot\.)\b(?:" + "|".join(API) + r")\(")
_LANGS = {"", "python", "py", "python3"}


def code_of(text: str) -> str:
    """The program text of a RoboEval answer: its first python block, else the text; a completion body (no
    `def task_program`) gets the header the original prompt ended with."""
    blocks = [text[a:b] for lang, a, b in fenced_blocks(text) if lang.lower() in _LANGS and text[a:b].strip()]
    code = blocks[0] if blocks else text
    if not ENTRY.search(code):
        code = "def task_program():" + ("" if code.startswith("\n") else "\n") + code
    return code


def lower_double_quoted(code: str) -> str:
    """Every double-quoted string literal lower-cased (its prefix and, in an f-string, its fields too, as a
    text rewrite does); text that does not tokenize is left to fail as it would in the original."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        return code
    starts = [0]
    for line in code.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    out, position = [], 0
    for tok in tokens:
        if tok.type != tokenize.STRING or '"' not in tok.string or "'" in tok.string.split('"', 1)[0]:
            continue
        begin = starts[tok.start[0] - 1] + tok.start[1]
        end = starts[tok.end[0] - 1] + tok.end[1]
        out += [code[position:begin], code[begin:end].lower()]
        position = end
    return "".join(out) + code[position:]


def original_rewrite(code: str) -> str:
    """The original runner's text rewriting (without the appended call, which our job makes)."""
    code = lower_double_quoted(code).replace("task_program()", "task_program(robot)")
    for name in API:
        code = code.replace(f"{name}(", f"robot.{name}(")
    return code.replace("time.sleep(1)", "time.sleep(0.01)")


def _chain(expr: ast.expr, rest: str) -> ast.expr | None:
    """`p[0]` followed by a field's `.attr` / `[key]` chain, or None when the chain does not parse."""
    for attr, key in re.findall(r"\.(\w+)|\[([^\]]*)\]", rest):
        if attr:
            expr = ast.Attribute(expr, attr, ast.Load())
        else:
            expr = ast.Subscript(expr, ast.Constant(int(key) if key.isdigit() else key), ast.Load())
    return expr if re.fullmatch(r"(\.\w+|\[[^\]]*\])*", rest) else None


def _as_fstring(template: str) -> ast.JoinedStr | None:
    """The f-string over `p` (positional) and `k` (keyword) arguments equal to `template.format(*p, **k)`."""
    try:
        pieces = list(string.Formatter().parse(template))
    except ValueError:
        return None
    values: list[ast.expr] = []
    auto = 0
    for literal, field, spec, conversion in pieces:
        if literal:
            values.append(ast.Constant(literal))
        if field is None:
            continue
        if spec and "{" in spec:
            return None
        head, rest = re.match(r"([^.\[]*)(.*)", field).groups()  # type: ignore[union-attr]
        if head == "":
            head, auto = str(auto), auto + 1
        source = ast.Subscript(ast.Name("p", ast.Load()), ast.Constant(int(head)), ast.Load()) if head.isdigit() \
            else ast.Subscript(ast.Name("k", ast.Load()), ast.Constant(head), ast.Load())  # fmt: skip
        expr = _chain(source, rest)
        if expr is None:
            return None
        kind = {None: -1, "r": 114, "s": 115, "a": 97}.get(conversion)
        if kind is None:
            return None
        values.append(ast.FormattedValue(expr, kind, ast.JoinedStr([ast.Constant(spec)]) if spec else None))
    return ast.JoinedStr(values)


class _Adapt(ast.NodeTransformer):
    """The jail adaptations that keep the rewritten program's meaning (see the module docstring)."""

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "format" and isinstance(func.value, ast.Constant) \
                and isinstance(func.value.value, str):  # fmt: skip
            body = _as_fstring(func.value.value)
            if body is not None:
                params = ast.arguments(posonlyargs=[], args=[], vararg=ast.arg("p"), kwonlyargs=[], kw_defaults=[],
                                       kwarg=ast.arg("k"), defaults=[])  # fmt: skip
                return ast.Call(ast.Lambda(params, body), node.args, node.keywords)
        return node

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> ast.ExceptHandler:
        self.generic_visit(node)
        if node.type is None:
            node.type = ast.Name("Exception", ast.Load())
        return node


def _uses_time_unimported(tree: ast.Module) -> bool:
    imported = any(
        isinstance(n, ast.Import) and any((a.asname or a.name) == "time" for a in n.names) for n in ast.walk(tree)
    )
    return not imported and any(isinstance(n, ast.Name) and n.id == "time" for n in ast.walk(tree))


def convert_program(text: str) -> str:
    """A RoboEval-form program as the program our sandbox runs (with the original's rewriting applied). A
    program that does not parse after the rewriting is returned as rewritten text, to fail as it would there."""
    code = code_of(text)
    rewritten = is_rewritten(code)
    if not rewritten:
        code = original_rewrite(code)
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return code
    body = tree.body
    if rewritten and body and _calls_entry(body[-1]):
        body.pop()  # the call the original appended: our job makes it
    for node in body:
        if isinstance(node, ast.FunctionDef) and node.name == "task_program" and len(node.args.args) == 1:
            node.args.defaults = [ast.Name("robot", ast.Load())]  # `task_program()` in our job = (robot)
    tree = _Adapt().visit(tree)
    if _uses_time_unimported(tree):
        body.insert(0, ast.Import([ast.alias("time")]))
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def is_rewritten(code: str) -> bool:
    """Whether `code` is already in the runner's rewritten form: `def task_program(robot):`, every API call through
    `robot.`, and the appended `task_program(robot)` last (a model's own program with `def task_program(robot):`
    and bare calls is rewritten like any other, as the original would)."""
    return bool(REWRITTEN.search(code) and APPENDED.search(code.rstrip() + "\n") and not BARE_CALL.search(code))


def _calls_entry(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
        and node.value.func.id == "task_program"
    )
