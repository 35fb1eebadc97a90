"""The README's commands and its 'register your own env' example are part of the contract: test them."""

import re
import subprocess
from pathlib import Path

from gymnasium.utils.env_checker import check_env

import rlvr_gym
from rlvr_gym.agents.scripted import OracleAgent
from rlvr_gym.checks import run_checks
from rlvr_gym.rollout import collect_sync

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def test_readme_has_exactly_two_setup_commands():
    block = re.search(r"## Set up\n.*?```bash\n(.*?)```", README, re.S)
    assert block, "README needs a '## Set up' section with one bash block"
    commands = [line for line in block.group(1).splitlines() if line.strip() and not line.startswith("#")]
    assert len(commands) == 2
    assert "scripts/test.sh" in commands[1]
    # .ci/run runs the README's commands as written: its extraction of them yields exactly these two lines.
    root = Path(__file__).resolve().parents[2]
    extract = re.search(r"mapfile -t COMMANDS < <\((awk .*)\)\n", (root / ".ci" / "run").read_text())
    assert extract, ".ci/run must read its commands from README.md"
    ran = subprocess.run(["bash", "-c", extract.group(1)], cwd=root, capture_output=True, text=True, check=True)
    assert ran.stdout.splitlines() == commands


def test_register_your_own_env_example():
    code = re.search(r"## Register your own env\n.*?```python\n(.*?)```", README, re.S).group(1)
    assert len([line for line in code.splitlines() if line.strip()]) <= 30
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)
    env = rlvr_gym.make("rlvr/Reverse-v0")
    check_env(env, skip_render_check=True)
    episodes = collect_sync("rlvr/Reverse-v0", OracleAgent(), tasks=6)
    assert all(e.passed for e in episodes)
    env.reset(options={"task_index": 0})
    assert env.step("wrong")[1] == 0.0
    # The snippet lives in no importable module, so the checks that need child processes cannot rebuild it.
    report = run_checks(
        "rlvr/Reverse-v0", tasks=8, checks=["oracle", "wrong_answers", "hacks", "splits", "verify_time", "reward_floor"]
    )
    assert report.ok, [(r.check, r.detail) for r in report.results if not r.status == "pass"]
