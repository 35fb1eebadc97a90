"""Every `rlvr-gym` command is listed by the top-level help and ends its own `--help` with a runnable example.

The command tree is walked from the real sources of truth: the built-in subparsers and the installed entry-point
group `rlvr_gym.commands`, so a command added to pyproject.toml without a `COMMANDS` row fails here.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rlvr_gym.cli import COMMANDS, GROUPS, build_parser, command_table, main, plugin_commands

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "transformers", "fastapi", "uvicorn", "rlvr_gym.algorithms", "rlvr_gym.viewer", "rlvr_gym.serve")


def builtin_commands() -> set[str]:
    """Subcommands that parse in cli.py itself (the stand-ins for uninstalled plug-ins have no `fn`)."""
    parser = build_parser()
    choices = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    return {name for name, sub in choices.items() if sub.get_default("fn") is not None}


def our_plugins() -> set[str]:
    return {name for name, ep in plugin_commands().items() if ep.dist is None or ep.dist.name == "rlvr-gym"}


ALL_COMMANDS = sorted(builtin_commands() | our_plugins() | set(COMMANDS))  # third-party ones installed: not ours


def example_words(name: str) -> list[list[str]]:
    """The argv of each `rlvr-gym <name> ...` in the command's example (examples may chain a setup step)."""
    parts = [shlex.split(step) for step in COMMANDS[name].example.split("&&")]
    return [words[2:] for words in parts if words[:2] == ["rlvr-gym", name]]


def test_every_entry_point_of_this_package_is_in_the_table():
    assert our_plugins() - set(COMMANDS) == set()
    assert builtin_commands() - set(COMMANDS) == set()
    assert {info.group for info in COMMANDS.values()} <= set(GROUPS) - {"plugins"}


def test_top_level_help_lists_every_command_under_its_heading(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for group in GROUPS[:-1]:
        assert f"\n{group}:\n" in out
    table = command_table(plugin_commands())
    for name in ALL_COMMANDS:
        line = next((line for line in out.splitlines() if line.split()[:1] == [name]), None)
        assert line is not None, f"{name} missing from the top-level help"
        assert table[name].summary in line
    assert "Example:" in out and out.rstrip().splitlines()[-1].strip().startswith("rlvr-gym ")


@pytest.mark.parametrize("name", ALL_COMMANDS)
def test_command_help_ends_with_a_runnable_example(name, capsys):
    assert main([name, "--help"]) == 0
    out = capsys.readouterr().out
    assert "usage: rlvr-gym " + name in out
    assert out.rstrip().splitlines()[-2:] == ["Example:", f"  {COMMANDS[name].example}"]
    runs = example_words(name)
    assert runs, "the example must run the command it documents"
    for flag in (w.split("=")[0] for words in runs for w in words if w.startswith("-")):
        assert flag in out, f"example flag {flag} is not an option of {name}"
    for word in (w for words in runs for w in words if w.startswith("configs/")):
        assert (ROOT / word).is_file(), word


@pytest.mark.parametrize("name", sorted(builtin_commands()))
def test_builtin_examples_parse(name):
    for words in example_words(name):
        assert build_parser().parse_args([name, *words]).fn is not None


def test_uninstalled_plugin_says_what_to_install(monkeypatch, capsys):
    monkeypatch.setattr("rlvr_gym.cli.plugin_commands", dict)
    assert main(["serve", "rlvr/Math-v0"]) == 2
    assert "pip install 'rlvr-gym[serve]'" in capsys.readouterr().err
    assert main(["serve", "--help"]) == 2 and "not installed" in capsys.readouterr().err


PLUGIN = '''
"""A third-party command, defined outside rlvr-gym's table."""
import argparse


def main(argv):
    """Say hello from a plug-in.

    Example: rlvr-gym hello --name you
    """
    parser = argparse.ArgumentParser(prog="rlvr-gym hello")
    parser.add_argument("--name", default="world")
    print("hello", parser.parse_args(argv).name)
    return 0
'''


@pytest.fixture
def hello_plugin(tmp_path, monkeypatch):
    (tmp_path / "hello_plugin.py").write_text(textwrap.dedent(PLUGIN))
    dist = tmp_path / "hello_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: hello-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[rlvr_gym.commands]\nhello = hello_plugin:main\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "hello_plugin", raising=False)
    return "hello"


def test_third_party_plugin_listed_from_its_docstring_without_importing_it(hello_plugin, capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "\nplugins:\n  hello" in out and "Say hello from a plug-in." in out
    assert "hello_plugin" not in sys.modules
    assert main(["hello", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--name" in out and out.rstrip().endswith("Example:\n  rlvr-gym hello --name you")
    assert main(["hello", "--name", "you"]) == 0 and capsys.readouterr().out == "hello you\n"


def test_console_script_help_imports_no_plugin():
    """The installed `rlvr-gym` script, once: every command listed, none of the heavy stacks imported."""
    script = Path(sys.executable).with_name("rlvr-gym")
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    result = subprocess.run([str(script), "--help"], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    assert all(name in result.stdout for name in ALL_COMMANDS)
    imported = {line.split("|")[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")}
    assert not {m for m in imported if m.startswith(HEAVY)}
