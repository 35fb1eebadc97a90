"""The clean template every job is forked from: a fresh interpreter that never receives any job's data.

``python3 -s -S zygote.py SOCKET_FD`` is exec'd by the worker (so it starts from a fresh address space, not
a copy of the worker's, which has handled earlier requests). It preloads the modules typical jobs import,
builds the job's std streams, loads the seccomp filter once (every job inherits it), and then only ever
receives descriptors: for each ``fork`` message (five descriptors: the job's spec, stdin, stdout, stderr and a
setup-error pipe) it forks one child (child.py), reports ``pid N``, waits for it and reports
``exit WSTATUS CPU_S``. A job forked from here can find nothing of earlier jobs in its memory.
"""

import ctypes
import gc
import os
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import child  # noqa: E402
import jobcgroup  # noqa: E402
import seccomp_filter  # noqa: E402

PRELOAD = (
    "collections",
    "itertools",
    "functools",
    "math",
    "re",
    "heapq",
    "bisect",
    "string",
    "json",
    "typing",
    "random",
    "traceback",
    "io",
    "types",
    "atexit",
    "dataclasses",
    "operator",
    "copy",
    "statistics",
    "fractions",
    "decimal",
    "threading",
)
PR_SET_PDEATHSIG = 1


def main() -> None:
    sock = socket.socket(fileno=int(sys.argv[1]))
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0)
    for name in PRELOAD:
        try:
            __import__(name)
        except ImportError:
            pass
    streams = child.std_streams()
    cgroup = jobcgroup.JobCgroup()
    if "--no-seccomp" not in sys.argv:  # benchmarks/sandbox_throughput.py measures its cost
        seccomp_filter.JobFilter().load()
    gc.collect()
    gc.freeze()  # keep the forked children's copy-on-write pages shared
    sock.send(b"ready")
    while True:
        msg, fds, _, _ = socket.recv_fds(sock, 64, 8, socket.MSG_CMSG_CLOEXEC)
        if not msg:
            return
        if msg != b"fork" or len(fds) != 5:
            for fd in fds:
                os.close(fd)
            sock.send(b"error bad request")
            continue
        pid = os.fork()
        if pid == 0:
            sock.close()
            child.run(fds, cgroup, streams)
        for fd in fds:
            os.close(fd)
        sock.send(b"pid %d" % pid)
        _, status, usage = os.wait4(pid, 0)
        sock.send(b"exit %d %.6f" % (status, usage.ru_utime + usage.ru_stime))


if __name__ == "__main__":
    main()
