"""The clean template every job is forked from: a fresh interpreter that never receives any job's data.

``python3 -s -S zygote.py SOCKET_FD`` is exec'd by the worker (so it starts from a fresh address space, not
a copy of the worker's, which has handled earlier requests). It preloads the modules typical jobs import,
builds the job's std streams, loads the seccomp filter once (every job inherits it), and then only ever
receives descriptors: for each ``fork`` message (five descriptors: the job's spec, stdin, stdout, stderr and a
setup-error pipe) it hands them to a child (child.py), reports ``pid N``, waits for it and reports
``exit WSTATUS CPU_S``. The child is forked ahead of time on ``prefork`` (sent by the worker once the slot is
clean), so its move into the job cgroups is off the job's critical path. A job forked from here can find
nothing of earlier jobs in its memory.
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
    serve(sock, cgroup, streams)


def serve(sock: socket.socket, cgroup, streams) -> None:
    """Messages: ``prefork`` (prepare the next job's process now), ``fork`` + five descriptors (run a job)."""
    ready = None  # (pid, channel) of a pre-forked child waiting in the job cgroups for its descriptors
    while True:
        msg, fds, _, _ = socket.recv_fds(sock, 64, 8, socket.MSG_CMSG_CLOEXEC)
        if not msg:
            return
        if msg == b"prefork" and not fds:
            if ready is None:
                ready = prefork(sock, cgroup, streams)
            continue
        if msg != b"fork" or len(fds) != 5:
            for fd in fds:
                os.close(fd)
            sock.send(b"error bad request")
            continue
        pid, channel = ready or prefork(sock, cgroup, streams)
        ready = None
        try:
            socket.send_fds(channel, [b"go"], fds)
        except OSError:  # the waiting child was killed (another template's job cleanup): start a new one
            channel.close()
            os.waitpid(pid, 0)
            pid, channel = prefork(sock, cgroup, streams)
            socket.send_fds(channel, [b"go"], fds)
        channel.close()
        for fd in fds:
            os.close(fd)
        sock.send(b"pid %d" % pid)
        _, status, usage = os.wait4(pid, 0)
        sock.send(b"exit %d %.6f" % (status, usage.ru_utime + usage.ru_stime))


def prefork(sock: socket.socket, cgroup, streams) -> tuple[int, socket.socket]:
    """Fork the next job's process and let it enter the job cgroups; it then waits for its descriptors."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid == 0:
        sock.close()
        ours.close()
        entered = child.enter_job(cgroup)
        msg, fds, _, _ = socket.recv_fds(theirs, 16, 8, socket.MSG_CMSG_CLOEXEC)
        theirs.close()
        if msg != b"go" or len(fds) != 5:
            os._exit(124)
        child.run(fds, cgroup, streams, entered)
    theirs.close()
    return pid, ours


if __name__ == "__main__":
    main()
