"""Issue 39, "one core that knows no family": the import graph between env families, core, agents and algorithms.

Every `.py` file is parsed (never imported) and each import statement resolved to an absolute module name,
relative imports included. An env family may import only itself, core and `rlvr_gym.sandboxes` (where what
several families share lives, e.g. `sandboxes/python_programs/`); core, sandboxes and agents import no family;
algorithms import no family beyond the allow-list below, which may only shrink.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The root-folder layout of setup.py: folder -> installed package.
PACKAGES = {
    "envs": "rlvr_gym.envs",
    "agents": "rlvr_gym.agents",
    "algorithms": "rlvr_gym.algorithms",
    "sandboxes": "rlvr_gym.sandboxes",
    "rlvr_gym": "rlvr_gym",
}
FAMILIES = frozenset(p.name for p in (ROOT / "envs").iterdir() if (p / "__init__.py").is_file())

# Imports of a family that remain today, by importer path prefix. The algorithm entries are the next steps of
# issue 39 (REBEL's belief states and PopuLoRA's AZR tasks belong behind a family-neutral interface). Remove an
# entry when its import goes; never add one.
ALLOWED: dict[str, frozenset[str]] = {
    "algorithms/rebel/": frozenset({"alfworld"}),
    "algorithms/populora/": frozenset({"azr"}),
}


def module_of(path: str) -> tuple[str, str]:
    """(module name, package that relative imports start from) of a repository-relative `.py` path."""
    folder, *rest = Path(path).with_suffix("").parts
    parts = [*PACKAGES[folder].split("."), *rest]
    if parts[-1] == "__init__":
        parts.pop()
        return ".".join(parts), ".".join(parts)
    return ".".join(parts), ".".join(parts[:-1])


def imported_modules(source: str, package: str) -> set[str]:
    """Every module an import statement (or `import_module("...")` with a literal name) in `source` may load."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)  # `from pkg import submodule`
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.add(node.args[0].value)
    return found


def families_imported(source: str, path: str) -> set[str]:
    """The env families whose modules `source` (the file at `path`) imports; its own family is not counted."""
    module, package = module_of(path)
    own = module.split(".")[2] if module.startswith("rlvr_gym.envs.") else None
    names = (name.split(".") for name in imported_modules(source, package))
    return {p[2] for p in names if p[:2] == ["rlvr_gym", "envs"] and len(p) > 2 and p[2] in FAMILIES} - {own}


def graph() -> dict[str, set[str]]:
    """Repository-relative path -> families it imports, for every file that imports one."""
    edges = {}
    for folder in PACKAGES:
        for file in sorted((ROOT / folder).rglob("*.py")):
            path = file.relative_to(ROOT).as_posix()
            imported = families_imported(file.read_text(encoding="utf-8"), path)
            if imported:
                edges[path] = imported
    return edges


def allowed(path: str) -> frozenset[str]:
    return frozenset().union(*(fams for prefix, fams in ALLOWED.items() if path.startswith(prefix)))


@pytest.fixture(scope="module")
def edges() -> dict[str, set[str]]:
    return graph()


def test_no_family_core_agent_or_algorithm_imports_a_family_outside_the_allow_list(edges):
    breaches = {path: sorted(fams - allowed(path)) for path, fams in edges.items() if fams - allowed(path)}
    assert not breaches, f"family imports (share through rlvr_gym.sandboxes or core instead): {breaches}"


def test_the_allow_list_is_not_stale(edges):
    for prefix, fams in ALLOWED.items():
        used = set().union(*(found for path, found in edges.items() if path.startswith(prefix)))
        assert fams <= used, f"{prefix} no longer imports {sorted(fams - used)}: remove it from ALLOWED"


def test_the_walk_sees_the_known_families_and_folders():
    assert {"code", "azr", "robot", "alfworld", "tools"} <= FAMILIES
    assert module_of("envs/azr/execution.py") == ("rlvr_gym.envs.azr.execution", "rlvr_gym.envs.azr")
    assert module_of("envs/azr/__init__.py") == ("rlvr_gym.envs.azr", "rlvr_gym.envs.azr")
    assert module_of("rlvr_gym/registry.py") == ("rlvr_gym.registry", "rlvr_gym")


@pytest.mark.parametrize(
    "source",
    [
        "from rlvr_gym.envs.code.harness import runner_source",
        "import rlvr_gym.envs.code.harness",
        "from rlvr_gym.envs import code",
        "from ..code.harness import runner_source",
        "from ..code import harness",
        "from .. import code",
        "def f():\n    from rlvr_gym.envs.code import actions\n",
        "importlib.import_module('rlvr_gym.envs.code.actions')",
    ],
)
def test_the_checker_catches_a_cross_family_import(source):
    assert families_imported(source, "envs/azr/execution.py") == {"code"}
    if "from .." not in source:
        assert families_imported(source, "agents/chat.py") == {"code"}
        assert families_imported(source, "algorithms/populora/population.py") == {"code"}
        assert "code" not in allowed("algorithms/populora/population.py")


@pytest.mark.parametrize(
    "source",
    [
        "from . import tasks\nfrom .verifier import verify",
        "from rlvr_gym.envs.azr.tasks import AZRTasks",
        "from rlvr_gym.sandboxes.python_programs.plain_values import encode",
        "from rlvr_gym import envs\nimport rlvr_gym.envs",  # the registry may name the envs package itself
    ],
)
def test_the_checker_lets_own_family_core_and_sandboxes_pass(source):
    assert families_imported(source, "envs/azr/execution.py") == set()
