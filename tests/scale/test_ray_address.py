"""`--ray-address` in practice: a cluster process (`python -m rlvr_gym.scale`) and a driver process joining it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import skip_without_ray

pytestmark = pytest.mark.heavy

DRIVER = """
import json, sys
from rlvr_gym.agents.scripted import OracleAgent
from rlvr_gym.scale import collect_on_ray, connect
with connect(sys.argv[1]):
    import ray
    nodes = [n["NodeManagerAddress"] for n in ray.nodes() if n["Alive"]]
    episodes = collect_on_ray("rlvr/CodeGen-v0", OracleAgent(), tasks=4, concurrency=2)
print(json.dumps({"nodes": nodes, "passed": [e.passed for e in episodes]}))
"""


def test_a_driver_process_joins_a_loopback_cluster_by_address(tmp_path):
    skip_without_ray()
    out = (tmp_path / "cluster.out").open("w+")
    cluster = subprocess.Popen(
        [sys.executable, "-m", "rlvr_gym.scale", "--nodes", "2"], stdout=out, stderr=subprocess.DEVNULL, text=True
    )
    try:
        lines = _wait_for_address(out, cluster)
        env = dict(os.environ)
        for assignment in lines[0].removeprefix("export ").split():
            key, _, value = assignment.partition("=")
            env[key] = value
        address = lines[1].split()[1]
        assert address.startswith("127.0.0.1:")
        driver = subprocess.run(
            [sys.executable, "-c", DRIVER, address], env=env, capture_output=True, text=True, timeout=240
        )
        assert driver.returncode == 0, driver.stderr[-3000:]
        result = json.loads(driver.stdout.strip().splitlines()[-1])
        assert result == {"nodes": ["127.0.0.1", "127.0.0.1"], "passed": [True] * 4}
    finally:
        cluster.send_signal(signal.SIGTERM)
        try:
            cluster.wait(60)
        except subprocess.TimeoutExpired:
            cluster.kill()
            cluster.wait()
    assert cluster.returncode == 0


def _wait_for_address(out, process, wait_s: float = 120.0) -> list[str]:
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        out.seek(0)
        lines = out.read().splitlines()
        if len(lines) >= 2 and lines[1].startswith("address: "):
            return lines
        assert process.poll() is None, "the cluster process exited before printing its address"
        time.sleep(0.5)
    raise AssertionError("the cluster never printed its address")
