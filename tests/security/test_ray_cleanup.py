"""Ray leaves nothing behind: after an error and after Ctrl-C no process, temp dir or port of the private Ray remains,
its listeners were on 127.0.0.1 only, and stale handles used afterwards never start a second Ray.

Both drivers run at once (each starts its own private one-node Ray), so the test costs about one Ray start. The
error driver waits for the test to have read its listeners before it raises (leaving at once raced the check:
"no listening socket found", about 1 run in 4 here).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

CHILD = Path(__file__).with_name("ray_child.py")


def _alive(pid: int, start: str) -> bool:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return False
    return fields[19] == start and fields[0] not in ("Z", "X")


def _socket_inodes(pid: int) -> set[str]:
    inodes = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    except OSError:
        pass
    return inodes


def _listeners(inodes: set[str] | None = None) -> list[tuple[str, int]]:
    """(local address in hex, port) of TCP sockets in LISTEN state, optionally only those with these inodes."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and (inodes is None or fields[9] in inodes):
                address, port = fields[1].split(":")
                found.append((address, int(port, 16)))
    return found


# 127.0.0.1, ::1 and ::ffff:127.0.0.1 as /proc/net writes them
LOOPBACK_HEX = {"0100007F", "00000000000000000000000001000000", "0000000000000000FFFF00000100007F"}


def _start(mode: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(CHILD), mode],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=CHILD.parent,
    )


def _first_report(child: subprocess.Popen) -> dict:
    line = child.stdout.readline()
    assert line, f"driver failed before reporting: {child.stderr.read()[-3000:]}"
    return json.loads(line)


@pytest.mark.timeout(180)
def test_private_ray_leaves_nothing_after_an_error_and_after_ctrl_c():
    pytest.importorskip("ray")
    children = {mode: _start(mode) for mode in ("error", "sigint")}
    try:
        reports = {mode: _first_report(child) for mode, child in children.items()}
        ports = {}
        for mode, report in reports.items():
            inodes = set().union(*(_socket_inodes(pid) for pid, _ in report["procs"]))
            ports[mode] = _listeners(inodes)
            assert ports[mode], f"no listening socket among Ray's processes {report['procs']}: the check proves nothing"
            assert {address for address, _ in ports[mode]} <= LOOPBACK_HEX, f"Ray listens beyond loopback: {ports}"
        children["sigint"].send_signal(signal.SIGINT)
        outputs = {
            mode: child.communicate("go\n" if mode == "error" else None, timeout=120)
            for mode, child in children.items()
        }
    finally:  # a failed check above still lets each driver leave its Ray cleanly (a kill would leak its agents)
        for child in children.values():
            if child.poll() is None:
                child.send_signal(signal.SIGINT)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    child.communicate(timeout=60)
            if child.poll() is None:
                child.kill()
                child.wait()
    for mode, (out, err) in outputs.items():
        lines = [json.loads(line) for line in out.splitlines()]
        assert children[mode].returncode == 0, err[-3000:]
        assert lines[0] == {"left_by": "RuntimeError" if mode == "error" else "KeyboardInterrupt"}
        assert lines[1] == {"ray_initialized": False}, "a stale handle started a second Ray"
        report = reports[mode]
        deadline = time.monotonic() + 10
        while any(_alive(pid, start) for pid, start in report["procs"]) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [pid for pid, start in report["procs"] if _alive(pid, start)], f"{mode}: Ray processes left"
        assert not os.path.exists(report["temp_dir"]), f"{mode}: {report['temp_dir']} left behind"
        still = set(_listeners()) & set(ports[mode])
        assert not still, f"{mode}: ports still listening: {still}"
