"""Security findings by an AST visitor, in the spirit of bandit's rules (static: the code is never executed).

Flagged: dynamic code execution (eval, exec, compile, __import__), shell and process launching (os.system,
os.popen, os.exec*/spawn*, subprocess with shell=True, plus any subprocess call as a milder finding),
deserialisation of untrusted data (pickle/marshal/shelve loads, yaml.load without a safe loader), and interpreter
introspection (gc, inspect, ctypes, sys._getframe). Since the families run a candidate only in the sandbox and
judge it outside, these cannot change a verdict; they stay findings because solution code has no business with them.
The rule names mirror bandit's ids where one exists.
"""

from __future__ import annotations

import ast

from .findings import Finding

_CALLS: dict[str, tuple[str, str]] = {
    "eval": ("B307", "use of eval"),
    "exec": ("B102", "use of exec"),
    "compile": ("B307", "use of compile"),
    "__import__": ("B403", "dynamic __import__"),
    "os.system": ("B605", "shell command via os.system"),
    "os.popen": ("B605", "shell command via os.popen"),
    "os._exit": ("R001", "hard process exit via os._exit"),
    "os.kill": ("R002", "sending signals via os.kill"),
    "pickle.loads": ("B301", "pickle deserialisation"),
    "pickle.load": ("B301", "pickle deserialisation"),
    "marshal.loads": ("B302", "marshal deserialisation"),
    "shelve.open": ("B301", "shelve deserialisation"),
    "sys._getframe": ("R003", "frame introspection"),
}
_PREFIX_CALLS = {"os.exec": ("B606", "process replacement via os.exec*"), "os.spawn": ("B606", "process via os.spawn*")}
_MODULES = {
    "subprocess": ("B404", "imports subprocess"),
    "pickle": ("B403", "imports pickle"),
    "marshal": ("B403", "imports marshal"),
    "ctypes": ("R004", "imports ctypes"),
    "gc": ("R005", "imports gc (interpreter introspection)"),
    "inspect": ("R006", "imports inspect (interpreter introspection)"),
}


def _dotted(node: ast.expr) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def _truthy_keyword(call: ast.Call, name: str) -> bool:
    for keyword in call.keywords:
        if keyword.arg == name:
            return not (isinstance(keyword.value, ast.Constant) and not keyword.value.value)
    return False


class _Visitor(ast.NodeVisitor):
    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self.aliases: dict[str, str] = {}

    def _add(self, node: ast.AST, rule: str, message: str) -> None:
        self.findings.append(
            Finding("security", rule, message, getattr(node, "lineno", None), getattr(node, "col_offset", 0))
        )

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.aliases[alias.asname or alias.name] = alias.name
            self._module(node, alias.name)
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        self._module(node, module)
        for alias in node.names:
            self.aliases[alias.asname or alias.name] = f"{module}.{alias.name}"
        self.generic_visit(node)

    def _module(self, node: ast.AST, module: str) -> None:
        top = module.split(".")[0]
        if top in _MODULES:
            self._add(node, *_MODULES[top])

    def _resolve(self, name: str) -> str:
        head, _, rest = name.partition(".")
        full = self.aliases.get(head, head)
        return f"{full}.{rest}" if rest else full

    def visit_Call(self, node: ast.Call) -> None:
        name = self._resolve(_dotted(node.func))
        if name in _CALLS:
            self._add(node, *_CALLS[name])
        elif any(name.startswith(prefix) for prefix in _PREFIX_CALLS):
            self._add(node, *next(v for p, v in _PREFIX_CALLS.items() if name.startswith(p)))
        elif name.startswith("subprocess."):
            if _truthy_keyword(node, "shell"):
                self._add(node, "B602", f"{name} with shell=True")
            else:
                self._add(node, "B603", f"process launch via {name}")
        elif name in ("yaml.load", "yaml.unsafe_load") and not any(k.arg == "Loader" for k in node.keywords):
            self._add(node, "B506", "yaml.load without a safe Loader")
        self.generic_visit(node)


def security_findings(tree: ast.AST) -> list[Finding]:
    """All security findings of a parsed program, in source order."""
    visitor = _Visitor()
    visitor.visit(tree)
    return sorted(visitor.findings, key=lambda f: (f.line or 0, f.col))
