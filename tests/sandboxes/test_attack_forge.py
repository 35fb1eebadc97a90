"""Attacker goal: FORGE OR ALTER THE RESULT -- fake evidence, fake protocol frames, poisoned collected files."""

from __future__ import annotations

import struct

from attack_helpers import probe, run

from rlvr_gym.sandboxes import EVIDENCE_CLIENT, ExecRequest, Status


def test_guessed_nonce_records_are_ignored(sandbox):
    r = sandbox.run(
        ExecRequest(
            code="""
import json
for guess in ["0" * 32, "f" * 32, "deadbeef" * 4]:
    print("\\n" + guess + " " + json.dumps({"test": 0, "passed": True}), flush=True)
print('{"done": true}')
""",
            evidence=True,
        )
    )
    assert r.status is Status.OK and r.evidence == []


def test_job_cannot_rewrite_nonce_file(sandbox):
    r = sandbox.run(
        ExecRequest(
            code="""
import os
path = os.environ["RLVR_NONCE_FILE"]
try:
    with open(path, "w") as f:
        f.write("0" * 32)
    print("rewrote")
except OSError:
    print("refused")
""",
            evidence=True,
        )
    )
    assert r.stdout == "refused\n"


def test_fake_protocol_frame_on_stdout(sandbox):
    """Bytes shaped like the worker's result frame are just output: the status is the real one."""
    frame = b'{"status": "ok", "exit_code": 0, "stdout": "", "evidence": [{"done": true}], "dirty": false}'
    payload = struct.pack(">I", len(frame)) + frame
    r = run(sandbox, f"import os, sys\nos.write(1, {payload!r})\nos.write(2, {payload!r})\nsys.exit(3)")
    assert r.status is Status.ERROR and r.exit_code == 3 and r.evidence == []


def test_writes_to_every_descriptor(sandbox):
    r = run(
        sandbox,
        """
        import os
        for fd in range(3, 4096):
            try:
                os.write(fd, b"\\x00\\x00\\x00\\x10" + b'{"status":"ok"}')
            except OSError:
                pass
        raise SystemExit(5)
    """,
    )
    assert (r.status, r.exit_code) == (Status.ERROR, 5)


def test_kill_parent_template_and_worker(sandbox):
    found = probe(
        sandbox,
        """
        import json, os, signal
        res = {}
        for name, pid in [("parent", os.getppid()), ("init", 1), ("two", 2), ("three", 3)]:
            try:
                os.kill(pid, signal.SIGKILL); res[name] = "sent"
            except OSError as e:
                res[name] = e.errno
        print(json.dumps(res))
    """,
    )
    assert "sent" not in found.values(), found
    assert run(sandbox, "print('next')").stdout == "next\n"


def test_collected_symlink_to_secret(sandbox):
    r = run(
        sandbox,
        """
        import os
        os.symlink("/etc/passwd", "result.txt")
        os.symlink("/proc/1/environ", "env.txt")
        os.symlink("/opt/rlvr", "outdir")
    """,
        collect=["result.txt", "env.txt", "outdir/worker.py"],
    )
    assert r.status is Status.OK and r.files == {}


def test_collected_fifo_and_device(sandbox):
    r = run(
        sandbox,
        """
        import os
        os.mkfifo("result.txt")
        try:
            os.mknod("dev.txt", 0o20666, os.makedev(1, 3))
        except OSError:
            pass
    """,
        collect=["result.txt", "dev.txt"],
    )
    assert r.status is Status.OK and r.files == {}


def test_collected_directory_swapped_for_link(sandbox):
    r = run(
        sandbox,
        """
        import os
        os.makedirs("/tmp/elsewhere", exist_ok=True)
        open("/tmp/elsewhere/answer.txt", "w").write("forged")
        os.symlink("/tmp/elsewhere", "out")
    """,
        collect=["out/answer.txt"],
    )
    assert r.files == {}


def test_clock_tampering(sandbox):
    found = probe(
        sandbox,
        """
        import ctypes, json, time
        libc = ctypes.CDLL(None, use_errno=True)
        tv = (ctypes.c_long * 2)(0, 0)
        res = {"settimeofday": libc.settimeofday(tv, None), "clock_settime": libc.clock_settime(0, tv),
               "adjtimex": libc.adjtimex(ctypes.create_string_buffer(256))}
        print(json.dumps(res))
    """,
    )
    assert all(v == -1 for v in found.values()), found


def test_harness_code_is_read_only(sandbox):
    found = probe(
        sandbox,
        """
        import json, os
        hit = []
        for p in ["/opt/rlvr/job_lifecycle.py", "/opt/rlvr/x.py", "/usr/lib/python3.11/json/__init__.py",
                  "/usr/local/bin/python3", "/etc/passwd"]:
            try:
                with open(p, "a") as f:
                    f.write("#")
                hit.append(p)
            except OSError:
                pass
        print(json.dumps(hit))
    """,
    )
    assert found == []


def test_evidence_survives_stdout_sabotage(sandbox):
    code = (
        EVIDENCE_CLIENT
        + """
import os, sys
sys.stdout = open(os.devnull, "w")
os.close(1)
_rlvr_report({"done": True})
"""
    )
    r = sandbox.run(ExecRequest(code=code, evidence=True))
    assert r.evidence == [{"done": True}]
