"""Host-side unit tests of the in-sandbox building blocks: seccomp program, safe cleanup, request options."""

from __future__ import annotations

import os
import re
import struct
from pathlib import Path

import pytest

from rlvr_gym.sandboxes import ExecRequest
from rlvr_gym.sandboxes.in_sandbox import cleanup, seccomp_filter
from rlvr_gym.sandboxes.spec import to_spec

HEADER = Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h")


def _bpf_verdict(nr: int, arch: int = seccomp_filter.AUDIT_ARCH_X86_64, args=(0,) * 6) -> int:
    """Interpret the filter program the way the kernel does (only the opcodes it uses)."""
    data = struct.pack("<IIQ6Q", nr & 0xFFFFFFFF, arch, 0, *args)
    program, pc, acc = seccomp_filter.program(), 0, 0
    while True:
        code, jt, jf, k = program[pc]
        if code == 0x20:
            acc, pc = struct.unpack_from("<I", data, k)[0], pc + 1
        elif code == 0x06:
            return k
        else:
            taken = {0x15: acc == k, 0x35: acc >= k, 0x45: bool(acc & k)}[code]
            pc += 1 + (jt if taken else jf)


@pytest.mark.skipif(not HEADER.exists(), reason="no kernel headers to compare with")
def test_syscall_numbers_match_the_kernel_header():
    known = dict(re.findall(r"#define __NR_(\w+) (\d+)", HEADER.read_text()))
    for name, nr in seccomp_filter.DENIED.items():
        if name in known:
            assert int(known[name]) == nr, name


def test_filter_decisions():
    deny = seccomp_filter.RET_ERRNO | 1
    kill = seccomp_filter.RET_KILL_PROCESS
    assert _bpf_verdict(101) == deny  # ptrace
    assert _bpf_verdict(0) == seccomp_filter.RET_ALLOW  # read
    assert _bpf_verdict(101, arch=0x40000003) == kill  # i386
    assert _bpf_verdict(39 | 0x40000000) == kill  # x32 getpid
    assert _bpf_verdict(56, args=(0x10000000 | 17, 0, 0, 0, 0, 0)) == deny  # clone(CLONE_NEWUSER)
    assert _bpf_verdict(56, args=(0x003D0F00 | 17, 0, 0, 0, 0, 0)) == seccomp_filter.RET_ALLOW  # pthread_create
    assert _bpf_verdict(41, args=(2, 1, 0, 0, 0, 0)) == seccomp_filter.RET_ERRNO | 97  # AF_INET
    assert _bpf_verdict(41, args=(1, 1, 0, 0, 0, 0)) == seccomp_filter.RET_ALLOW  # AF_UNIX
    assert _bpf_verdict(16, args=(0, 0xFFFFFFFF00005412, 0, 0, 0, 0)) == deny  # TIOCSTI, high bits set
    assert _bpf_verdict(16, args=(0, 0x5401, 0, 0, 0, 0)) == seccomp_filter.RET_ALLOW  # TCGETS


def test_wipe_is_iterative_and_follows_no_link(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("precious")
    top = tmp_path / "scratch"
    top.mkdir()
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(1500):  # deeper than Python's recursion limit, and the path longer than PATH_MAX
        os.mkdir("dd", dir_fd=fd)
        child = os.open("dd", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = child
    os.symlink(str(outside), "link", dir_fd=fd)
    os.close(fd)
    (top / "link").symlink_to(outside)
    (top / "filelink").symlink_to(outside / "keep.txt")
    locked = top / "locked"
    locked.mkdir()
    (locked / "f").write_text("x")
    locked.chmod(0)
    try:
        assert cleanup.wipe_children(str(top)) is True
        assert os.listdir(top) == []
        assert (outside / "keep.txt").read_text() == "precious"
    finally:
        cleanup.wipe_children(str(tmp_path))  # pytest's own recursive cleanup would choke on a failure's leftovers


def test_hash_seed_option_reaches_the_spec():
    spec = to_spec(ExecRequest(code="pass", hash_seed=0))
    assert spec["hash_seed"] == 0 and spec["env"]["PYTHONHASHSEED"] == "0"
    assert to_spec(ExecRequest(code="pass", env={"PYTHONHASHSEED": "7"}))["hash_seed"] == 7
    assert to_spec(ExecRequest(code="pass"))["hash_seed"] is None
    assert to_spec(ExecRequest(code="pass", env={"PYTHONHASHSEED": "random"}))["hash_seed"] is None
