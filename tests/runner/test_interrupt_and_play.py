"""Ctrl-C ends `eval` cleanly (summary, resume command, exit 130); `play` validates input and quits cleanly (#14.7).

The children run with Python's default SIGINT handler whatever the test runner inherited: a process started in the
background by a shell without job control inherits SIGINT *ignored*, Python keeps it ignored, and then no Ctrl-C
semantics can be observed (the run simply finishes, exit 0). A user's Ctrl-C at a terminal always meets the default.
"""

import json
import os
import select
import signal
import subprocess
import sys
import textwrap
import time

import pytest

SLOW_PLUGIN = """
import os
import time
import rlvr_gym
from rlvr_gym import AnswerEnv, Task, Verdict

GATE = 40  # episodes from this index on wait for the gate file: the run cannot finish before the test's Ctrl-C

class SlowEnv(AnswerEnv):
    @property
    def num_tasks(self):
        return 500
    def get_task(self, index):
        return Task(id=f"slow/train/{index}", prompt=f"Say {index}", ground_truth=str(index),
                    reference_actions=[str(index)], metadata={"index": index})
    def score_answer(self, task, text):
        time.sleep(0.05)
        gate = os.environ.get("SLOW_INT_GATE")
        while gate and int(task.ground_truth) >= GATE and not os.path.exists(gate):
            time.sleep(0.02)
        ok = text.strip() == task.ground_truth
        return Verdict(reward=float(ok), passed=ok)

def register_envs():
    rlvr_gym.register("rlvr/SlowInt-v0", "slow_int_plugin:SlowEnv")
"""


@pytest.fixture
def plugin_env(tmp_path):
    (tmp_path / "slow_int_plugin.py").write_text(textwrap.dedent(SLOW_PLUGIN))
    dist = tmp_path / "slow_int_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: slow-int-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[rlvr_gym.envs]\nslow = slow_int_plugin:register_envs\n")
    return {**os.environ, "PYTHONPATH": str(tmp_path), "COLUMNS": "200", "SLOW_INT_GATE": str(tmp_path / "gate")}


# `python -m rlvr_gym.cli`, with the SIGINT handler a terminal's foreground process has (see the module docstring)
RUN_CLI = ("import runpy, signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
           "runpy.run_module('rlvr_gym.cli', run_name='__main__')")


def cli(*args):
    return [sys.executable, "-c", RUN_CLI, *args]


def test_ctrl_c_prints_summary_and_resume_command_and_exits_130(plugin_env, tmp_path):
    out = tmp_path / "run" / "episodes.jsonl"
    cmd = cli("eval", "rlvr/SlowInt-v0", "--agent", "oracle", "-n", "200", "-c", "4", "-o", str(out), "--no-progress")
    proc = subprocess.Popen(cmd, env=plugin_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline and (not out.exists() or len(out.read_bytes().splitlines()) < 12):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr + stdout
    assert "resume with:" in stderr and "--resume" in stderr
    assert "mean_reward" in stdout  # the summary table so far
    rows = [json.loads(line) for line in out.read_text().splitlines()]  # every line whole
    assert 12 <= len(rows) < 200
    summary = json.loads((out.parent / "summary.json").read_text())
    assert summary["interrupted"] is True and summary["episodes"] == len(rows)
    (tmp_path / "gate").touch()
    # interrupted in-flight episodes are recorded as errors and retried by the resume
    subprocess.run([*cmd, "--resume"], env=plugin_env, check=True, capture_output=True)
    ids = [json.loads(line)["episode_id"] for line in out.read_text().splitlines()]
    assert len(ids) == 200 == len(set(ids))
    final = json.loads((out.parent / "summary.json").read_text())
    assert final["error_count"] == 0 and final["pass_rate"] == 1.0


def test_play_help_validation_and_clean_exits(plugin_env):
    def play(*args, stdin=""):
        return subprocess.run(
            cli("play", *args), env=plugin_env, input=stdin, capture_output=True, text=True, timeout=60
        )

    helped = play("--help")
    assert helped.returncode == 0 and "--task-index" in helped.stdout and "Ctrl-C" in helped.stdout
    for bad in (
        ["rlvr/SlowInt-v0", "--task-index", "500"],
        ["rlvr/SlowInt-v0", "--task-index", "-1"],
        ["rlvr/Nope-v0"],
    ):
        result = play(*bad)
        assert result.returncode == 2 and "Traceback" not in result.stderr and "error" in result.stderr, bad
    assert play("rlvr/SlowInt-v0", "--task-index", "x").returncode == 2  # argparse: not an int
    eof = play("rlvr/SlowInt-v0", "--task-index", "3")
    assert eof.returncode == 0 and "Traceback" not in eof.stderr
    done = play("rlvr/SlowInt-v0", "--task-index", "3", stdin="3\n")
    assert done.returncode == 0 and "reward 1.000" in done.stdout

    proc = subprocess.Popen(
        cli("play", "rlvr/SlowInt-v0", "--task-index", "1"),
        env=plugin_env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.time() + 30
    buffer = b""
    while time.time() < deadline and b"Say 1" not in buffer:
        if select.select([proc.stdout], [], [], 0.1)[0]:
            buffer += os.read(proc.stdout.fileno(), 4096)
    assert b"Say 1" in buffer
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130 and b"Traceback" not in stderr
