"""Static components (no execution): syntax, security visitor, style via ruff and the built-in fallback."""

from __future__ import annotations

import ast

import pytest

from rlvr_gym.envs.code.actions import parse_action
from rlvr_gym.envs.code.penalties import penalty_map
from rlvr_gym.envs.code.spec import CodeSpec
from rlvr_gym.envs.code.verifier import analyse_many
from rlvr_gym.sandboxes.python_programs.security import security_findings
from rlvr_gym.sandboxes.python_programs.style import ruff_binary, style_findings


def rules(code: str) -> list[str]:
    return [f.rule for f in security_findings(ast.parse(code))]


@pytest.mark.parametrize(
    ("code", "rule"),
    [
        ("eval('1')", "B307"),
        ("exec('x = 1')", "B102"),
        ("import os\nos.system('ls')", "B605"),
        ("from os import system as run\nrun('ls')", "B605"),
        ("import subprocess\nsubprocess.run('ls', shell=True)", "B602"),
        ("import subprocess as sp\nsp.Popen(['ls'])", "B603"),
        ("import pickle\npickle.loads(b'')", "B301"),
        ("__import__('os')", "B403"),
        ("import ctypes", "R004"),
        ("import sys\nsys._getframe(1)", "R003"),
        ("import yaml\nyaml.load(s)", "B506"),
    ],
)
def test_security_rules(code, rule):
    assert rule in rules(code)


def test_clean_code_has_no_security_findings():
    assert rules("import math\n\ndef f(x):\n    return math.sqrt(abs(x))\n") == []
    assert "B602" not in rules("import subprocess\nsubprocess.run(['ls'], shell=False)")


def test_ruff_style_findings():
    assert ruff_binary() is not None, "ruff is installed in the venv"
    found, tool = style_findings("import os\nx = 1 \n\ndef f(a):\n    return a == None\n")
    assert tool == "ruff"
    assert {"F401", "W291", "E711"} <= {f.rule for f in found}
    assert style_findings("def f(a):\n    return a + 1\n")[0] == []


def test_builtin_style_fallback():
    found, tool = style_findings("x = 1 \ntry:\n    pass\nexcept:\n    pass\n", use_ruff=False)
    assert tool == "builtin"
    assert {"W291", "E722"} <= {f.rule for f in found}


def test_syntax_error_zeroes_everything():
    (report,) = analyse_many([CodeSpec(entry_point="f", asserts=["assert f()"])], ["def f(:\n  return 1"])
    assert not report.syntax_ok
    assert report.components["syntax"] == 0.0 and report.components["style"] == 0.0
    assert report.components["security"] == 0.0 and report.components["outcome"] == -1.0


def test_preamble_findings_are_not_charged_to_the_agent():
    spec = CodeSpec(entry_point="f", preamble="import os\nimport subprocess\n", asserts=["assert f() == 1"])
    (report,) = analyse_many([spec], ["def f():\n    return 1\n"])
    assert report.components["style"] == 1.0 and report.components["security"] == 1.0
    assert report.of_kind("security")  # found, but on preamble lines


def test_penalty_map_points_at_the_offending_line():
    action = "Here it is:\n<submit>\n```python\ndef f(x):\n    y = 2\n    return eval(x)\n```\n</submit>"
    parsed = parse_action(action)
    (report,) = analyse_many([CodeSpec(entry_point="f", asserts=["assert f('1') == 1"])], [parsed.code])
    spans = penalty_map(report, parsed.code, parsed.offset)
    security = [s for s in spans if s.kind == "security"]
    assert len(security) == 1
    assert action[security[0].start : security[0].end] == "    return eval(x)"
    assert security[0].penalty < 0
    style = [s for s in spans if s.rule == "F841"]  # unused local y
    assert style and action[style[0].start : style[0].end] == "    y = 2"


def test_penalty_map_for_syntax_error():
    action = "<submit>\ndef f():\n    return (1\n</submit>"
    parsed = parse_action(action)
    (report,) = analyse_many([CodeSpec(entry_point="f", asserts=["assert f() == 1"])], [parsed.code])
    spans = penalty_map(report, parsed.code, parsed.offset)
    assert [s.kind for s in spans] == ["syntax"]
    assert spans[0].penalty == -1.0
    assert action[spans[0].start : spans[0].end] in parsed.code


def test_token_penalties_follow_character_spans():
    from rlvr_gym.sandboxes.python_programs.token_credit import PenaltySpan, token_penalties

    spans = [PenaltySpan(10, 20, -0.5, "security", "B307", "eval"), PenaltySpan(15, 30, -0.1, "style", "E711", "x")]
    offsets = [(0, 5), (8, 12), (16, 18), (25, 26), (30, 31), (12, 12)]
    assert token_penalties(spans, offsets) == [0.0, -0.5, -0.6, -0.1, 0.0, 0.0]
