"""The job's seccomp filter: a hand-written classic-BPF program, so every ABI decision is explicit.

Only the native x86_64 ABI may make syscalls at all: a 32-bit (``int 0x80``, AUDIT_ARCH_I386) or x32 (syscall
number with bit 30 set) call kills the process, so no rule below can be bypassed through another ABI's
numbering. On the native ABI the filter denies (EPERM) what no job needs and what reaches other processes or the
kernel's larger attack surfaces; everything else is allowed. Argument rules: ``clone`` with namespace flags,
``socket``/``socketpair`` of any family but AF_UNIX (EAFNOSUPPORT), and the ``ioctl`` requests that inject
terminal input (TIOCSTI, TIOCLINUX). ``clone3`` answers ENOSYS (its flags live in memory the filter cannot read;
glibc then falls back to ``clone``).
"""

from __future__ import annotations

import ctypes
import errno
import struct

AUDIT_ARCH_X86_64 = 0xC000003E
X32_SYSCALL_BIT = 0x40000000

# x86_64 syscall numbers (asm/unistd_64.h); tests/sandboxes check them against the host's header.
DENIED = {
    # reaching other processes
    "ptrace": 101,
    "process_vm_readv": 310,
    "process_vm_writev": 311,
    "kcmp": 312,
    "pidfd_open": 434,
    "pidfd_send_signal": 424,
    "pidfd_getfd": 438,
    "process_madvise": 440,
    "process_mrelease": 448,
    "move_pages": 279,
    "migrate_pages": 256,
    # mounts, namespaces, root changes (old and new mount API)
    "mount": 165,
    "umount2": 166,
    "pivot_root": 155,
    "chroot": 161,
    "unshare": 272,
    "setns": 308,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "mount_setattr": 442,
    "open_tree_attr": 467,
    "statmount": 457,
    "listmount": 458,
    "open_by_handle_at": 304,
    "name_to_handle_at": 303,
    # kernel attack surface
    "bpf": 321,
    "perf_event_open": 298,
    "userfaultfd": 323,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "keyctl": 250,
    "add_key": 248,
    "request_key": 249,
    "modify_ldt": 154,
    "fanotify_init": 300,
    "lookup_dcookie": 212,
    "uselib": 134,
    "ustat": 136,
    "sysfs": 139,
    "_sysctl": 156,
    "personality": 135,
    "vhangup": 153,
    # machine administration
    "kexec_load": 246,
    "kexec_file_load": 320,
    "init_module": 175,
    "finit_module": 313,
    "delete_module": 176,
    "create_module": 174,
    "get_kernel_syms": 177,
    "query_module": 178,
    "reboot": 169,
    "swapon": 167,
    "swapoff": 168,
    "acct": 163,
    "syslog": 103,
    "settimeofday": 164,
    "clock_settime": 227,
    "clock_adjtime": 305,
    "adjtimex": 159,
    "quotactl": 179,
    "quotactl_fd": 443,
    "iopl": 172,
    "ioperm": 173,
    "sethostname": 170,
    "setdomainname": 171,
    "nfsservctl": 180,
    "afs_syscall": 183,
    "tuxcall": 184,
    "security": 185,
    "vserver": 236,
    "getpmsg": 181,
    "putpmsg": 182,
    # SysV / POSIX message-queue IPC objects outlive a job inside a warm worker's IPC namespace
    "shmget": 29,
    "shmat": 30,
    "msgget": 68,
    "semget": 64,
    "mq_open": 240,
}
NR_CLONE, NR_CLONE3, NR_SOCKET, NR_SOCKETPAIR, NR_IOCTL = 56, 435, 41, 53, 16
CLONE_NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
AF_UNIX = 1
TIOCSTI, TIOCLINUX = 0x5412, 0x541C

# classic BPF opcodes and seccomp return values
_LD_W_ABS = 0x20
_JEQ, _JGE, _JSET = 0x15, 0x35, 0x45
_RET_K = 0x06
RET_ALLOW = 0x7FFF0000
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
_OFF_NR, _OFF_ARCH, _OFF_ARGS = 0, 4, 16

PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2


def _stmt(code: int, k: int) -> tuple:
    return (code, 0, 0, k)


def _jump(code: int, k: int, jt: int, jf: int) -> tuple:
    return (code, jt, jf, k)


def _arg_low(index: int) -> int:
    return _OFF_ARGS + 8 * index  # little endian: the low 32 bits come first


def program(allow_inet: bool = False) -> list[tuple]:
    """The filter as (code, jt, jf, k) instructions. ``allow_inet`` lifts the socket-family rule."""
    deny = _stmt(_RET_K, RET_ERRNO | errno.EPERM)
    ins = [
        _stmt(_LD_W_ABS, _OFF_ARCH),
        _jump(_JEQ, AUDIT_ARCH_X86_64, 1, 0),
        _stmt(_RET_K, RET_KILL_PROCESS),  # i386 (int 0x80) or any other ABI
        _stmt(_LD_W_ABS, _OFF_NR),
        _jump(_JGE, X32_SYSCALL_BIT, 0, 1),
        _stmt(_RET_K, RET_KILL_PROCESS),  # x32 numbering
    ]
    for nr in sorted(set(DENIED.values())):
        ins += [_jump(_JEQ, nr, 0, 1), deny]
    ins += [_jump(_JEQ, NR_CLONE3, 0, 1), _stmt(_RET_K, RET_ERRNO | errno.ENOSYS)]
    # clone(flags, ...): deny namespace creation
    ins += [
        _jump(_JEQ, NR_CLONE, 0, 4),
        _stmt(_LD_W_ABS, _arg_low(0)),
        _jump(_JSET, CLONE_NAMESPACE_FLAGS, 0, 1),
        deny,
        _stmt(_RET_K, RET_ALLOW),
    ]
    if not allow_inet:
        for nr in (NR_SOCKET, NR_SOCKETPAIR):
            ins += [
                _jump(_JEQ, nr, 0, 4),
                _stmt(_LD_W_ABS, _arg_low(0)),
                _jump(_JEQ, AF_UNIX, 1, 0),
                _stmt(_RET_K, RET_ERRNO | errno.EAFNOSUPPORT),
                _stmt(_RET_K, RET_ALLOW),
            ]
    # ioctl(fd, request): the kernel compares the request as a 32-bit value
    ins += [
        _jump(_JEQ, NR_IOCTL, 0, 4),
        _stmt(_LD_W_ABS, _arg_low(1)),
        _jump(_JEQ, TIOCSTI, 1, 0),
        _jump(_JEQ, TIOCLINUX, 0, 1),
        deny,
    ]
    ins.append(_stmt(_RET_K, RET_ALLOW))
    return ins


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class JobFilter:
    """The compiled program, ready to load with one prctl (in the template process, so every job inherits it)."""

    def __init__(self, allow_inet: bool = False) -> None:
        ins = program(allow_inet)
        blob = b"".join(struct.pack("<HBBI", *i) for i in ins)
        self._buf = ctypes.create_string_buffer(blob, len(blob))
        self._prog = SockFprog(len(ins), ctypes.cast(self._buf, ctypes.c_void_p))
        self._prctl = ctypes.CDLL(None, use_errno=True).prctl
        self._prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]

    def load(self) -> None:
        if self._prctl(PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS failed")
        if self._prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(self._prog), 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "PR_SET_SECCOMP failed")
