"""Attacker goal: REACH ANOTHER JOB -- see, signal, trace, or share state with a concurrent or later job."""

from __future__ import annotations

import json
import textwrap

from attack_helpers import concurrently, probe, run, syscall_probe

from rlvr_gym.sandboxes import Status

VICTIM = """
import time
time.sleep(1.5)
print("victim finished")
"""


def _victim_survives(sandbox, attack: str) -> dict:
    """Run ``attack`` while a victim job runs in the other slot; the victim must finish normally."""
    victim, found = concurrently(
        lambda: run(sandbox, VICTIM), lambda: probe(sandbox, "import time; time.sleep(0.3)\n" + textwrap.dedent(attack))
    )
    assert victim.status is Status.OK and victim.stdout == "victim finished\n", (victim.status, victim.stderr)
    return found


def test_kill_minus_one_spares_concurrent_job(sandbox):
    _victim_survives(
        sandbox,
        """
        import json, os, signal
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
        print(json.dumps("tried"))
    """,
    )


def test_pid_bruteforce_signals_spare_concurrent_job(sandbox):
    found = _victim_survives(
        sandbox,
        """
        import json, os, signal
        hit = []
        for pid in range(1, 4096):
            if pid != os.getpid():
                try:
                    os.kill(pid, signal.SIGKILL); hit.append(pid)
                except OSError:
                    pass
        print(json.dumps(hit))
    """,
    )
    assert found == []


def test_proc_shows_no_other_process(sandbox):
    found = _victim_survives(
        sandbox,
        """
        import json, os
        print(json.dumps([p for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]))
    """,
    )
    assert found == []


def test_concurrent_jobs_do_not_share_tmp(sandbox):
    writer = run(sandbox, "open('/tmp/shared-x', 'w').write('secret'); open('/dev/shm/shared-y', 'w').write('s')")
    assert writer.status is Status.OK
    found, _ = concurrently(
        lambda: probe(
            sandbox,
            "import json, os, time; time.sleep(0.3); "
            "print(json.dumps([os.path.exists('/tmp/shared-x'), os.path.exists('/dev/shm/shared-y')]))",
        ),
        lambda: run(sandbox, "open('/tmp/shared-x', 'w').write('secret'); import time; time.sleep(1)"),
    )
    assert found == [False, False]


def test_abstract_socket_between_concurrent_jobs(sandbox):
    listener = """
        import socket, time
        s = socket.socket(socket.AF_UNIX); s.bind("\\0rlvr-rendezvous"); s.listen(5); s.settimeout(1.5)
        try:
            s.accept(); print("accepted")
        except OSError:
            print("nobody")
    """
    dialer = """
        import json, socket, time
        time.sleep(0.3)
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect("\\0rlvr-rendezvous"); print(json.dumps("connected"))
        except OSError as e:
            print(json.dumps(type(e).__name__))
    """
    heard, found = concurrently(lambda: run(sandbox, listener), lambda: probe(sandbox, dialer))
    assert found != "connected" and heard.stdout.strip() == "nobody"


def test_every_job_has_its_own_uid(sandbox):
    uid_probe = "import json, os, time; time.sleep(0.2); print(json.dumps(os.getuid()))"
    first, second = concurrently(lambda: probe(sandbox, uid_probe), lambda: probe(sandbox, uid_probe))
    later = [probe(sandbox, uid_probe) for _ in range(3)]
    uids = [first, second, *later]
    assert len(set(uids)) == len(uids) and min(uids) >= 1000


def test_ptrace_parent_and_init(sandbox):
    found = probe(
        sandbox,
        syscall_probe("""
        res["traceme"] = sc(101, 0, 0, 0, 0)
        res["attach_parent"] = sc(101, 16, os.getppid(), 0, 0)
        res["seize_init"] = sc(101, 0x4206, 1, 0, 0)
    """),
    )
    assert all(v[0] == -1 for v in found.values()), found


def test_process_vm_readv_of_parent(sandbox):
    found = probe(
        sandbox,
        """
        import ctypes, json, os
        libc = ctypes.CDLL(None, use_errno=True)
        buf = ctypes.create_string_buffer(64)
        class IOV(ctypes.Structure):
            _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
        local = IOV(ctypes.cast(buf, ctypes.c_void_p), 64)
        remote = IOV(0x400000, 64)
        r = libc.process_vm_readv(os.getppid(), ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
        w = libc.process_vm_writev(os.getppid(), ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
        print(json.dumps([r, w, ctypes.get_errno()]))
    """,
    )
    assert found[:2] == [-1, -1]


def test_pidfd_getfd_steals_no_descriptor(sandbox):
    found = probe(
        sandbox,
        syscall_probe("""
        for target in (os.getppid(), 1):
            res[f"open{target}"] = sc(434, target, 0)
            res[f"getfd{target}"] = sc(438, 3, 0, 0)
            res[f"signal{target}"] = sc(424, 3, 9, 0, 0)
    """),
    )
    assert all(v[0] == -1 for v in found.values()), found


def test_other_processes_proc_files(sandbox):
    found = probe(
        sandbox,
        """
        import json, os
        got = {}
        for pid in (1, 2, 3, os.getppid()):
            for leaf in ("environ", "mem", "fd", "cmdline", "maps", "root"):
                path = f"/proc/{pid}/{leaf}"
                try:
                    if os.path.isdir(path) and not os.path.islink(path):
                        got[path] = os.listdir(path)
                    else:
                        with open(path, "rb") as f:
                            got[path] = f.read(64).hex()
                except OSError:
                    pass
        print(json.dumps(got))
    """,
    )
    assert found == {}


def test_kcmp_and_fd_comparison_across_processes(sandbox):
    found = probe(sandbox, syscall_probe("res['kcmp'] = sc(312, os.getpid(), os.getppid(), 0, 0, 0)"))
    assert found["kcmp"][0] == -1


def test_job_cannot_change_identity(sandbox):
    found = probe(
        sandbox,
        """
        import json, os
        res = {}
        for name, call in [("setuid0", lambda: os.setuid(0)), ("setgid0", lambda: os.setgid(0)),
                           ("setgroups", lambda: os.setgroups([0])), ("seteuid", lambda: os.seteuid(1000))]:
            try:
                call(); res[name] = "changed"
            except OSError as e:
                res[name] = e.errno
        print(json.dumps(res))
    """,
    )
    assert "changed" not in found.values(), found


def test_later_job_cannot_signal_earlier_uid(sandbox):
    """A process of an earlier job (if one survived) runs as a different uid: nothing left to signal anyway."""
    first = probe(sandbox, "import json, os; print(json.dumps(os.getuid()))")
    found = probe(
        sandbox,
        """
        import json, os
        print(json.dumps(sorted(os.stat('/proc/' + p).st_uid for p in os.listdir('/proc') if p.isdigit())))
    """,
    )
    assert first not in found and json.dumps(found)
