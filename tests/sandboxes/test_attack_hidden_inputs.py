"""Attacker goal: READ HIDDEN INPUTS -- other jobs' files, stdin and environment, the worker's memory, host files."""

from __future__ import annotations

import os

from attack_helpers import probe, run, syscall_probe

from rlvr_gym.sandboxes import Limits, Status

MARK = "HIDDEN-TESTCASE-7f3a9c"

SCAN_OWN_MEMORY = """
import json, re
# a character class cannot match its own source text, so the pattern finds only real copies of a mark
pattern = re.compile(rb"HIDDEN[-]TESTCASE[-]7f3a9c[-](file|stdin|env|code)")
found = set()
with open("/proc/self/maps") as maps, open("/proc/self/mem", "rb", 0) as mem:
    for line in maps:
        start, end = (int(x, 16) for x in line.split()[0].split("-"))
        if "r" not in line.split()[1] or end - start > 512 << 20:
            continue
        try:
            mem.seek(start)
            chunk = mem.read(end - start)
        except (OSError, ValueError, OverflowError):
            continue
        found.update(m.group(1).decode() for m in pattern.finditer(chunk))
print(json.dumps(sorted(found)))
"""


def test_earlier_jobs_inputs_not_in_memory(sandbox):
    """Files, stdin and env of an earlier job must not be anywhere in a later job's address space."""
    marks = [MARK + "-file", MARK + "-stdin", MARK + "-env", MARK + "-code"]
    r = run(
        sandbox,
        f"x = {marks[3]!r}[::-1]",
        files={"tests.py": marks[0] * 50},
        stdin=marks[1] * 50,
        env={"SECRET": marks[2]},
    )
    assert r.status is Status.OK
    for _ in range(2):  # a sequential job usually lands in the slot just used; two cover both slots
        assert probe(sandbox, SCAN_OWN_MEMORY, limits=Limits(wall_s=20, cpu_s=20)) == []
    # control: the scanner does find a mark that really is in its memory
    control = "kept = open('tests.py').read()\n" + SCAN_OWN_MEMORY
    assert probe(sandbox, control, files={"tests.py": marks[0]}, limits=Limits(wall_s=20, cpu_s=20)) == ["file"]


def test_stdin_holds_only_this_request(sandbox):
    found = probe(
        sandbox,
        """
        import json, os
        os.lseek(0, 0, os.SEEK_SET)
        data = os.read(0, 1 << 20)
        print(json.dumps({"data": data.decode(), "size": os.fstat(0).st_size}))
    """,
        stdin="mine",
    )
    assert found == {"data": "mine", "size": 4}


def test_no_inherited_descriptors(sandbox):
    found = probe(
        sandbox,
        """
        import json, os
        open_fds = []
        for fd in range(3, 1024):
            try:
                os.fstat(fd); open_fds.append(fd)
            except OSError:
                pass
        print(json.dumps(open_fds))
    """,
    )
    assert found == []


def test_worker_protocol_pipe_and_memory(sandbox):
    found = probe(
        sandbox,
        """
        import json, os
        got = []
        for pid in range(1, 64):
            for leaf in ("fd/0", "fd/1", "mem", "environ", "cwd", "root/proc/1/mem"):
                try:
                    with open(f"/proc/{pid}/{leaf}", "rb") as f:
                        f.read(16); got.append(f"{pid}/{leaf}")
                except OSError:
                    pass
        print(json.dumps([g for g in got if not g.startswith(str(os.getpid()) + "/")]))
    """,
    )
    assert found == []


def test_host_files_and_project_source(sandbox):
    here = os.path.abspath(__file__)
    found = probe(
        sandbox,
        f"""
        import json, os
        got = []
        for p in ["/etc/shadow", "/root/.bash_history", {here!r}, "/work/main/README.md", "/proc/1/root/etc/shadow",
                  "/proc/self/root/etc/shadow", "/home", "/var/lib/containers", "/run/rlvr-podman/podman.sock",
                  "/sys/kernel/security", "/boot"]:
            try:
                if os.path.isdir(p):
                    if os.listdir(p):
                        got.append(p)
                else:
                    open(p, "rb").read(1); got.append(p)
            except OSError:
                pass
        print(json.dumps(got))
    """,
    )
    assert found == []


def test_open_by_handle_escape(sandbox):
    """The classic container breakout: name_to_handle_at + open_by_handle_at reach files outside the mount view."""
    found = probe(
        sandbox,
        syscall_probe("""
        buf = ctypes.create_string_buffer(128)
        ctypes.memmove(buf, (8).to_bytes(4, "little"), 4)
        mount_id = ctypes.c_int()
        res["name_to_handle_at"] = sc(303, -100, ctypes.addressof(ctypes.create_string_buffer(b"/usr")), ctypes.addressof(buf), ctypes.addressof(mount_id), 0)
        res["open_by_handle_at"] = sc(304, -100, ctypes.addressof(buf), 0)
    """),
    )
    assert all(v[0] == -1 for v in found.values()), found


def test_kernel_log_and_perf_snooping(sandbox):
    found = probe(
        sandbox,
        syscall_probe("""
        res["syslog"] = sc(103, 3, ctypes.addressof(ctypes.create_string_buffer(4096)), 4096)
        attr = ctypes.create_string_buffer(128)
        res["perf_event_open"] = sc(298, ctypes.addressof(attr), 0, -1, -1, 0)
        res["bpf"] = sc(321, 0, ctypes.addressof(attr), 128)
    """),
    )
    assert all(v[0] == -1 for v in found.values()), found


def test_environment_is_only_the_request(sandbox):
    os.environ["RLVR_HOST_CANARY"] = "host-secret"
    try:
        found = probe(
            sandbox,
            """
            import json, os
            raw = open("/proc/self/environ", "rb").read().decode()
            print(json.dumps({"env": sorted(os.environ), "raw": raw}))
        """,
        )
    finally:
        del os.environ["RLVR_HOST_CANARY"]
    assert found["env"] == ["HOME", "LANG", "PATH", "PYTHONDONTWRITEBYTECODE", "TMPDIR"]
    assert "host-secret" not in found["raw"] and "VIRTUAL_ENV" not in found["raw"]


def test_other_slot_job_directory(sandbox):
    found = probe(
        sandbox,
        """
        import json, os
        print(json.dumps([p for p in ["/tmp/job/../job2", "/proc/1/cwd/tmp", "/proc/2/cwd"] if os.path.exists(p)]))
    """,
    )
    assert found == []
