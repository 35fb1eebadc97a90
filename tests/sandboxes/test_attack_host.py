"""Attacker goal: ACT ON THE HOST -- mounts, namespaces, other syscall ABIs, raw sockets, tty injection, cleanup."""

from __future__ import annotations

import signal

import pytest
from attack_helpers import probe, run, syscall_probe

from rlvr_gym.sandboxes import Status
from rlvr_gym.sandboxes.local import IN_SANDBOX_DIR

MACHINE_CODE = """
import ctypes, mmap, sys
code = bytes.fromhex(sys.argv[1] if len(sys.argv) > 1 else CODE)
buf = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
buf.write(code)
addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
result = ctypes.CFUNCTYPE(ctypes.c_long)(addr)()
print("survived", result, flush=True)
"""


@pytest.mark.parametrize(
    "name,code",
    [
        # mov eax, 26 (i386 ptrace); xor ebx, ebx; int 0x80; ret  -- the 32-bit ABI from a 64-bit process
        ("i386_int80_ptrace", "b81a00000031dbcd80c3"),
        # mov eax, 0x40000000|101 (x32 ptrace); xor edi, edi; syscall; ret  -- the x32 ABI numbering
        ("x32_ptrace", "b86500004031ff0f05c3"),
        # mov eax, 0x40000000|272 (x32 unshare); mov edi, 0x10000000; syscall; ret
        ("x32_unshare", "b810010040bf000000100f05c3"),
    ],
)
def test_other_syscall_abis_are_killed(sandbox, name, code):
    r = run(sandbox, f"CODE = {code!r}\n" + MACHINE_CODE)
    assert r.status is Status.KILLED and r.signal == signal.SIGSYS, (r.status, r.stdout, r.stderr[-300:])
    assert "survived" not in r.stdout


def test_mount_and_umount(sandbox):
    found = probe(
        sandbox,
        syscall_probe("""
        t = ctypes.create_string_buffer(b"tmpfs"); d = ctypes.create_string_buffer(b"/tmp/job")
        res["mount"] = sc(165, ctypes.addressof(t), ctypes.addressof(d), ctypes.addressof(t), 0, 0)
        res["umount2_proc"] = sc(166, ctypes.addressof(ctypes.create_string_buffer(b"/proc")), 2)
        res["pivot_root"] = sc(155, ctypes.addressof(d), ctypes.addressof(d))
        res["chroot"] = sc(161, ctypes.addressof(d))
    """),
    )
    assert all(v[0] == -1 for v in found.values()), found


def test_new_mount_api(sandbox):
    found = probe(
        sandbox,
        syscall_probe("""
        fs = ctypes.create_string_buffer(b"tmpfs"); p = ctypes.create_string_buffer(b"/")
        res["fsopen"] = sc(430, ctypes.addressof(fs), 0)
        res["open_tree"] = sc(428, -100, ctypes.addressof(p), 1)
        res["fspick"] = sc(433, -100, ctypes.addressof(p), 0)
        res["move_mount"] = sc(429, -100, ctypes.addressof(p), -100, ctypes.addressof(p), 0)
        res["fsmount"] = sc(432, 3, 0, 0)
        res["mount_setattr"] = sc(442, -100, ctypes.addressof(p), 0, 0, 0)
    """),
    )
    assert all(v[0] == -1 for v in found.values()), found


def test_namespace_creation(sandbox):
    found = probe(
        sandbox,
        syscall_probe("""
        for flag, name in [(0x10000000, "user"), (0x20000, "mount"), (0x40000000, "net"), (0x20000000, "pid"),
                           (0x08000000, "ipc"), (0x04000000, "uts"), (0x02000000, "cgroup")]:
            res["unshare_" + name] = sc(272, flag)
            res["clone_" + name] = sc(56, flag | 17, 0, 0, 0, 0)
        res["setns"] = sc(308, os.open("/proc/self/ns/net", os.O_RDONLY), 0)
        res["clone3"] = sc(435, 0, 0)
    """),
    )
    assert all(v[0] == -1 for v in found.values()), found


def test_kernel_attack_surface(sandbox):
    found = probe(
        sandbox,
        syscall_probe("""
        buf = ctypes.create_string_buffer(256)
        res["io_uring_setup"] = sc(425, 8, ctypes.addressof(buf))
        res["userfaultfd"] = sc(323, 0)
        res["keyctl"] = sc(250, 0, -3, 0)
        res["add_key"] = sc(248, ctypes.addressof(ctypes.create_string_buffer(b"user")),
                            ctypes.addressof(ctypes.create_string_buffer(b"k")), 0, 0, -3)
        res["modify_ldt"] = sc(154, 0, ctypes.addressof(buf), 16)
        res["personality"] = sc(135, 0x0040000)
    """),
    )
    assert all(v[0] == -1 for v in found.values()), found


def test_machine_administration(sandbox):
    found = probe(
        sandbox,
        syscall_probe("""
        res["kexec_load"] = sc(246, 0, 0, 0, 0)
        res["init_module"] = sc(175, 0, 0, 0)
        res["finit_module"] = sc(313, 0, 0, 0)
        res["reboot"] = sc(169, 0xfee1dead, 672274793, 0x4321fedc, 0)
        res["swapoff"] = sc(168, 0)
        res["sethostname"] = sc(170, 0, 0)
        res["iopl"] = sc(172, 3)
    """),
    )
    assert all(v[0] == -1 for v in found.values()), found


def test_socket_families(sandbox):
    found = probe(
        sandbox,
        """
        import json, socket
        res = {}
        for name, fam, kind in [("inet", 2, 1), ("inet6", 10, 1), ("netlink", 16, 3), ("packet", 17, 3),
                                ("vsock", 40, 1), ("bluetooth", 31, 1), ("alg", 38, 5), ("unix", 1, 1)]:
            try:
                socket.socket(fam, kind).close(); res[name] = "open"
            except OSError as e:
                res[name] = e.errno
        try:
            socket.socketpair(2, 1); res["inet_pair"] = "open"
        except OSError as e:
            res["inet_pair"] = e.errno
        print(json.dumps(res))
    """,
    )
    assert found.pop("unix") == "open"
    assert "open" not in found.values(), found


def test_tty_injection(sandbox):
    found = probe(
        sandbox,
        """
        import ctypes, fcntl, json, os, pty, termios
        res = {}
        master, slave = pty.openpty()
        for name, req in [("TIOCSTI", termios.TIOCSTI), ("TIOCLINUX", 0x541C)]:
            try:
                fcntl.ioctl(slave, req, b"x"); res[name] = "done"
            except OSError as e:
                res[name] = e.errno
        for fd in (0, 1, 2):
            try:
                fcntl.ioctl(fd, termios.TIOCSTI, b"x"); res[f"fd{fd}"] = "done"
            except OSError as e:
                res[f"fd{fd}"] = e.errno
        print(json.dumps(res))
    """,
    )
    assert "done" not in found.values(), found


def test_cleanup_does_not_follow_links(sandbox):
    r = run(
        sandbox,
        """
        import os
        os.symlink("/opt/rlvr", "/tmp/harness")
        os.symlink("/", "/tmp/root")
        os.symlink("/usr/bin", "/tmp/job/bin")
        os.makedirs("/tmp/d/e")
        os.symlink("/opt/rlvr/job_lifecycle.py", "/tmp/d/e/f")
        os.link("/tmp/job/main.py", "/tmp/hard")
    """,
    )
    assert r.status is Status.OK
    assert (IN_SANDBOX_DIR / "job_lifecycle.py").exists() and (IN_SANDBOX_DIR / "worker.py").exists()
    assert probe(
        sandbox, "import json, os; print(json.dumps([os.path.exists('/usr/bin/python3'), os.listdir('/tmp')]))"
    ) == [True, ["job"]]


def test_cgroup_escape_and_limit_rewrite(sandbox):
    found = probe(
        sandbox,
        """
        import json, os
        hit = []
        for root, dirs, files in os.walk("/run/rlvr-cg"):
            for name in files:
                p = os.path.join(root, name)
                try:
                    with open(p, "w") as f:
                        f.write("max" if name == "pids.max" else "0")
                    hit.append(p)
                except OSError:
                    pass
        for p in ["/sys/fs/cgroup/pids/tasks", "/sys/fs/cgroup/memory/tasks", "/proc/sys/kernel/pid_max",
                  "/proc/sysrq-trigger", "/proc/self/oom_score_adj"]:
            try:
                with open(p, "w") as f:
                    f.write("0" if "oom" not in p else "-1000")
                hit.append(p)
            except OSError:
                pass
        print(json.dumps(hit))
    """,
    )
    assert found == []


def test_setuid_binary_gains_nothing(sandbox):
    found = probe(
        sandbox,
        """
        import json, os, shutil, subprocess
        shutil.copy("/usr/bin/id", "myid")
        os.chmod("myid", 0o4755)
        out = subprocess.run(["./myid", "-u"], capture_output=True, text=True).stdout.strip()
        print(json.dumps({"uid": out, "me": str(os.getuid())}))
    """,
    )
    assert found["uid"] == found["me"]


def test_no_capability_left_to_regain(sandbox):
    """The worker's one-time CAP_SYS_ADMIN/CAP_SETPCAP are gone from the bounding set every job inherits."""
    found = probe(
        sandbox,
        """
        import json
        status = dict(line.split(":", 1) for line in open("/proc/self/status"))
        print(json.dumps({k: int(status[k], 16) for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")}))
    """,
    )
    assert found["CapInh"] == found["CapPrm"] == found["CapEff"] == found["CapAmb"] == 0
    assert not found["CapBnd"] & ((1 << 21) | (1 << 8))  # CAP_SYS_ADMIN, CAP_SETPCAP
