"""Attacker goal: PERSIST -- leave something of the job alive or on disk for later jobs to find or use."""

from __future__ import annotations

import time

from attack_helpers import live_job_processes, probe, run

from rlvr_gym.sandboxes import Limits, Status

CHECK_NO_PROCESSES = """
import json, os
me = os.getuid()
seen = [p for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]
print(json.dumps({"visible": seen}))
"""


def _assert_gone(sandbox):
    assert live_job_processes(sandbox) == []
    assert probe(sandbox, CHECK_NO_PROCESSES) == {"visible": []}


def test_double_forked_daemon_in_new_session(sandbox):
    r = run(
        sandbox,
        """
        import os, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(60)
            os._exit(0)
        print("parent done")
    """,
    )
    assert r.status is Status.OK
    _assert_gone(sandbox)


def test_zombie_leader_with_live_thread(sandbox):
    """The main thread exits with the raw exit syscall; a thread keeps running (the leader is a zombie)."""
    t = time.monotonic()
    r = run(
        sandbox,
        """
        import ctypes, threading, time
        def spin():
            while True:
                time.sleep(0.01)
        threading.Thread(target=spin).start()
        print("leader leaves", flush=True)
        ctypes.CDLL(None).syscall(60, 0)   # SYS_exit: this thread only
    """,
        limits=Limits(wall_s=2),
    )
    assert r.status in (Status.OK, Status.TIMEOUT) and time.monotonic() - t < 8
    _assert_gone(sandbox)


def test_stopped_process(sandbox):
    r = run(
        sandbox,
        """
        import os, signal
        pid = os.fork()
        if pid == 0:
            os.setsid()
            os.kill(os.getpid(), signal.SIGSTOP)
            os._exit(0)
        print("left a stopped child")
    """,
    )
    assert r.status is Status.OK
    _assert_gone(sandbox)


def test_signal_ignoring_reparented_process(sandbox):
    run(
        sandbox,
        """
        import os, signal, time
        if os.fork() == 0:
            os.setsid()
            for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGUSR1):
                signal.signal(s, signal.SIG_IGN)
            if os.fork() == 0:
                while True:
                    time.sleep(0.05)
            os._exit(0)
    """,
    )
    _assert_gone(sandbox)


def test_fork_runner_evading_the_killer(sandbox):
    """Each generation forks the next and exits at once, so its pid keeps changing while the cleanup runs."""
    run(
        sandbox,
        """
        import os
        if os.fork() == 0:
            os.setsid()
            while True:
                try:
                    if os.fork():
                        os._exit(0)
                except OSError:
                    pass
        print("runner started")
    """,
        limits=Limits(wall_s=3, processes=16),
    )
    _assert_gone(sandbox)


def test_files_in_every_writable_place(sandbox):
    run(
        sandbox,
        """
        import os
        for d in ["/tmp", "/var/tmp", "/dev/shm", os.environ["HOME"], ".", "/run", "/run/lock", "/dev/mqueue"]:
            for name in ["persist", ".hidden"]:
                try:
                    with open(os.path.join(d, name), "w") as f:
                        f.write("x")
                except OSError:
                    pass
        os.makedirs("/tmp/locked/inner", exist_ok=True)
        open("/tmp/locked/inner/f", "w").write("x")
        os.chmod("/tmp/locked/inner", 0)
        os.chmod("/tmp/locked", 0o1000)
    """,
    )
    found = probe(
        sandbox,
        """
        import json, os
        left = []
        for d in ["/tmp", "/var/tmp", "/dev/shm", os.environ["HOME"], ".", "/run", "/run/lock", "/dev/mqueue"]:
            try:
                left += [os.path.join(d, n) for n in os.listdir(d) if n in ("persist", ".hidden", "locked")]
            except OSError:
                pass
        print(json.dumps(left))
    """,
    )
    assert found == []


def test_deep_tree_and_symlink_loops_against_cleanup(sandbox):
    r = run(
        sandbox,
        """
        import os
        os.chdir("/tmp")
        for i in range(3000):                      # deeper than any recursion limit
            os.mkdir("d")
            os.chdir("d")
        os.symlink(".", "loop")
        os.symlink("/tmp", "up")
        for i in range(2000):
            open(f"/tmp/many{i}", "w").close()
        print("built")
    """,
        limits=Limits(wall_s=20),
    )
    assert r.status is Status.OK, r.stderr[-500:]
    assert probe(sandbox, "import json, os; print(json.dumps(os.listdir('/tmp')))") == ["job"]


def test_abstract_socket_listener_left_behind(sandbox):
    run(
        sandbox,
        """
        import os, socket, time
        if os.fork() == 0:
            os.setsid()
            s = socket.socket(socket.AF_UNIX)
            s.bind("\\0rlvr-persist")
            s.listen(5)
            while True:
                time.sleep(1)
        time.sleep(0.2)
    """,
    )
    found = probe(
        sandbox,
        """
        import json, socket
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect("\\0rlvr-persist"); print(json.dumps("connected"))
        except OSError as e:
            print(json.dumps(type(e).__name__))
    """,
    )
    assert found != "connected"


def test_poisoned_interpreter_state(sandbox):
    """Rebinding builtins/modules in the warm interpreter must not reach the next job (each forks a clean copy)."""
    run(
        sandbox,
        """
        import builtins, json, sys
        builtins.len = lambda x: 42
        json.dumps = lambda *a, **k: "poisoned"
        sys.modules["math"] = None
        sys.path.insert(0, "/tmp/evil")
    """,
    )
    found = probe(
        sandbox,
        """
        import json, math, sys
        print(json.dumps({"len": len([1]), "math": math.sqrt(4), "evil": "/tmp/evil" in sys.path}))
    """,
    )
    assert found == {"len": 1, "math": 2.0, "evil": False}


def test_posix_shm_and_message_queue(sandbox):
    first = probe(
        sandbox,
        """
        import ctypes, json, os
        libc = ctypes.CDLL(None, use_errno=True)
        res = {"mq_open": libc.mq_open(b"/rlvr", 0o100 | 2, 0o666, None)}
        try:
            fd = os.open("/dev/shm/rlvr-seg", os.O_CREAT | os.O_RDWR, 0o666)
            os.write(fd, b"x" * 4096)
            res["shm"] = "created"
        except OSError:
            res["shm"] = "refused"
        print(json.dumps(res))
    """,
    )
    assert first["mq_open"] == -1
    found = probe(sandbox, "import json, os; print(json.dumps(os.path.exists('/dev/shm/rlvr-seg')))")
    assert found is False
