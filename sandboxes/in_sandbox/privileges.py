"""Capabilities, dumpability and /proc visibility of the trusted processes and of each job (ctypes, stdlib only)."""

from __future__ import annotations

import ctypes
import os

_LINUX_CAPABILITY_VERSION_3 = 0x20080522
CAP_SETPCAP, CAP_SYS_ADMIN = 8, 21
PR_SET_DUMPABLE, PR_CAPBSET_DROP = 4, 24
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 2, 4, 8, 32

_libc = ctypes.CDLL(None, use_errno=True)
_Header = ctypes.c_uint32 * 2
_Data = ctypes.c_uint32 * 6  # (effective, permitted, inheritable) x two 32-bit words


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def clear_all_capabilities() -> None:
    """Empty effective, permitted and inheritable sets (after a uid change only the inheritable one is left)."""
    _check(_libc.capset(_Header(_LINUX_CAPABILITY_VERSION_3, 0), _Data()), "capset")


def drop_capabilities(*caps: int) -> None:
    """Remove ``caps`` from every set of this process, bounding set included (needs CAP_SETPCAP for that)."""
    header, data = _Header(_LINUX_CAPABILITY_VERSION_3, 0), _Data()
    _check(_libc.capget(header, data), "capget")
    for cap in caps:
        word, bit = divmod(cap, 32)
        for offset in (0, 1, 2):
            data[word * 3 + offset] &= ~(1 << bit) & 0xFFFFFFFF
    for cap in caps:  # bounding set first: dropping needs CAP_SETPCAP, which may be among `caps`
        _check(_libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0), "PR_CAPBSET_DROP")
    _check(_libc.capset(header, data), "capset")


def set_dumpable() -> None:
    """A uid change clears the flag; without it a job cannot even read its own /proc/self files."""
    _check(_libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), "PR_SET_DUMPABLE")


def hide_other_processes() -> None:
    """Remount /proc with ``hidepid=invisible``: a job sees only the processes of its own (per-job) uid.

    Needs CAP_SYS_ADMIN once; the caller drops it right after. /proc stays the same mount, so masks and
    read-only submounts that bubblewrap or the container runtime put on it stay in place.
    """
    flags = MS_REMOUNT | MS_NOSUID | MS_NODEV | MS_NOEXEC
    _check(_libc.mount(b"proc", b"/proc", b"proc", flags, b"hidepid=invisible"), "remount /proc hidepid")
