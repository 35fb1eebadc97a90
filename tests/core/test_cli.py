import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from rlvr_gym.cli import main


def test_list_json(capsys, echo_env_id):
    assert main(["list", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert echo_env_id in [row["id"] for row in data["envs"]]


def test_eval_oracle_and_wrong_agent(tmp_path, echo_env_id):
    out = tmp_path / "oracle" / "episodes.jsonl"
    assert main(["eval", echo_env_id, "--agent", "oracle", "-n", "20", "-g", "2", "-o", str(out), "--no-progress"]) == 0
    summary = json.loads((out.parent / "summary.json").read_text())
    assert summary["episodes"] == 40 and summary["pass_rate"] == 1.0
    assert set(summary["by"]["difficulty"]) == {"0", "1"}
    out = tmp_path / "wrong" / "episodes.jsonl"
    assert main(["eval", echo_env_id, "--agent", "constant:-1", "-n", "10", "-o", str(out), "--no-progress"]) == 0
    assert json.loads((out.parent / "summary.json").read_text())["pass_rate"] == 0.0
    assert main(["eval", echo_env_id, "--agent", "constant:-1", "-n", "5", "-o", str(out), "--no-progress",
                 "--min-pass-rate", "0.5"]) == 1


def test_eval_fails_on_errors_and_bad_specs(tmp_path, echo_env_id):
    out = tmp_path / "e.jsonl"
    code = main(["eval", echo_env_id, "--agent", "oracle", "-n", "4", "-o", str(out), "--no-progress",
                 "--env-arg", "crash_on=[0,1,2]"])
    assert code == 1  # error rate 0.75 > 0.1, but every episode is still recorded
    assert len(out.read_text().splitlines()) == 4
    assert main(["eval", echo_env_id, "--agent", "nosuch:x", "-n", "1", "-o", str(out)]) == 2
    assert main(["eval", "rlvr/Nope-v0", "--agent", "oracle", "-n", "1", "-o", str(out)]) == 2


def test_eval_from_yaml_config_with_overrides(tmp_path, echo_env_id):
    cfg = tmp_path / "cfg.yaml"
    out = tmp_path / "c.jsonl"
    cfg.write_text(f"env: {echo_env_id}\nnum_tasks: 3\nagent:\n  spec: oracle\noutput: {out}\n")
    assert main(["eval", "--config", str(cfg), "--set", "num_tasks=5", "--no-progress"]) == 0
    assert len(out.read_text().splitlines()) == 5


def test_verify_external_outputs(tmp_path, capsys, echo_env_id):
    rows = [{"task_index": 3, "output": "3"}, {"task_id": "echo-7", "output": "8"},
            {"task_id": "echo-9", "outputs": ["1", "9"]}]
    path = tmp_path / "outputs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["verify", echo_env_id, str(path), "--env-arg", "max_attempts=2"]) == 0
    scored = [json.loads(line) for line in path.with_suffix(".scored.jsonl").read_text().splitlines()]
    assert [r["verdict"]["passed"] for r in scored] == [True, False, True]
    assert scored[2]["verdict"]["reward"] == 0.5


SLOW_PLUGIN = '''
import time
import rlvr_gym
from rlvr_gym import AnswerEnv, Task, Verdict

class SlowEnv(AnswerEnv):
    def get_task(self, index):
        return Task(id=f"slow-{index}", prompt="x", ground_truth="ok", reference_actions=["ok"])
    def score_answer(self, task, text):
        time.sleep(0.02)
        return Verdict(reward=1.0, passed=True, components={"correct": 1.0})

def register_envs():
    rlvr_gym.register("rlvr/Slow-v0", "slow_plugin:SlowEnv")
'''


def test_killed_run_resumes_to_exactly_n_times_g(tmp_path):
    (tmp_path / "slow_plugin.py").write_text(textwrap.dedent(SLOW_PLUGIN))
    dist = tmp_path / "slow_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: slow-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[rlvr_gym.envs]\nslow = slow_plugin:register_envs\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    out = tmp_path / "run" / "episodes.jsonl"
    cmd = [sys.executable, "-m", "rlvr_gym.cli", "eval", "rlvr/Slow-v0", "--agent", "oracle", "-n", "100",
           "-g", "3", "-c", "2", "-o", str(out), "--no-progress"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline and (not out.exists() or len(out.read_bytes().splitlines()) < 30):
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    partial = len(out.read_bytes().splitlines())
    assert 30 <= partial < 300, "the run must be killed mid-way for this test to mean anything"
    subprocess.run(cmd + ["--resume"], env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ids = [json.loads(line)["episode_id"] for line in out.read_text().splitlines()]
    assert len(ids) == 300 and len(set(ids)) == 300
    summary = json.loads((out.parent / "summary.json").read_text())
    assert summary["episodes"] == 300 and summary["pass_rate"] == 1.0


@pytest.mark.parametrize("command", ["train", "report"])
def test_plugin_commands_are_wired(command):
    from rlvr_gym.cli import plugin_commands

    assert command in plugin_commands()
