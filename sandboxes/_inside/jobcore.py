"""Run one job inside a sandbox: fork a child, drop it to the job uid, limit, supervise, kill, wipe, classify.

This file runs *inside* the isolation boundary under Debian's ``/usr/bin/python3 -I -S`` (stdlib only, plus the
optional ``seccomp`` module of python3-seccomp). The local backend's warm worker and the container backend's
per-job runner both call :func:`run_job`, so the two backends classify every outcome with the same code.

The process calling :func:`run_job` is trusted (uid 0 in its namespaces, with only SETUID/SETGID/CHOWN); the
child it forks runs untrusted code as ``ctx.uid``, with rlimits, no-new-privs and a seccomp filter.
"""

from __future__ import annotations

import base64
import errno
import json
import os
import resource
import select
import signal
import struct
import sys
import time

JOB_DIR = "/tmp/job"
SCRATCH_DIRS = ("/tmp", "/dev/shm")
NONCE_FILENAME = ".rlvr_nonce"
PATH = "/usr/local/bin:/usr/bin:/bin"
COLLECT_MAX_BYTES = 8 << 20
# The worker sits in its slot's cgroups itself (so a job is born there: no per-job cgroup migration, which
# costs about a millisecond); the cgroup limits leave room for it and its cleanup helper.
WORKER_ALLOWANCE_MB = 48
WORKER_ALLOWANCE_PIDS = 3

# Syscalls a job never needs; each fails with EPERM (as under Docker's default profile) rather than killing.
DENIED_SYSCALLS = (
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "mount", "umount2", "pivot_root", "chroot",
    "unshare", "setns", "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "bpf", "perf_event_open",
    "userfaultfd", "keyctl", "add_key", "request_key", "acct", "swapon", "swapoff", "reboot", "syslog",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "quotactl", "open_by_handle_at",
    "name_to_handle_at", "iopl", "ioperm", "fanotify_init", "lookup_dcookie", "io_uring_setup",
    # SysV / POSIX message-queue IPC objects outlive the job inside a warm worker's IPC namespace.
    "shmget", "shmat", "msgget", "semget", "mq_open",
)
NAMESPACE_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)


class Context:
    """What the trusted side knows about its slot."""

    def __init__(self, uid: int, host_pidns: int | None, mem_cgroup: str | None = None,
                 pids_cgroup: str | None = None, fast_code: bool = True, oom_control: str | None = None):
        if uid < 1000:
            raise ValueError("job uid must be >= 1000")
        if host_pidns is None or _pidns_inode() in (None, host_pidns):
            # run_job wipes /tmp and kills by uid: never do that in the host's namespaces
            raise RuntimeError("refusing to run jobs outside a sandbox pid namespace")
        self.uid = uid
        self.host_pidns = host_pidns
        self.mem_cgroup = mem_cgroup
        self.pids_cgroup = pids_cgroup
        self.fast_code = fast_code
        self.locked_down = False
        self.streams: tuple | None = None
        self.job_dir_ready = False
        self.cgroup_limits: tuple[int, int] | None = None
        self.oom_control = oom_control or (os.path.join(mem_cgroup, "memory.oom_control") if mem_cgroup else None)
        self.seccomp = build_seccomp()
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        self._prctl, self._capset = libc.prctl, libc.capset
        self._cap_header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
        self._cap_none = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable: all empty (two words each)

    def join_cgroups(self) -> None:
        """Move this (worker) process into the slot cgroups; every job forked later starts inside them."""
        for cg in (self.mem_cgroup, self.pids_cgroup):
            if cg:
                with open(os.path.join(cg, "tasks"), "w") as f:
                    f.write(str(os.getpid()))

    def lock_down(self) -> None:
        """Load the job seccomp filter on this (trusted) process, once: every forked job inherits it for free.

        The trusted side needs none of the denied syscalls. Also builds the job's std streams ahead of time.
        """
        self.seccomp.load()
        self.locked_down = True
        self.streams = std_streams()

    def set_dumpable(self) -> None:
        if self._prctl(4, 1, 0, 0, 0) != 0:  # PR_SET_DUMPABLE
            raise OSError("prctl(PR_SET_DUMPABLE) failed")

    def clear_capabilities(self) -> None:
        """After the uid change only the inheritable set is left (bwrap fills it); empty it too."""
        if self._capset(self._cap_header, self._cap_none) != 0:
            raise OSError("capset failed")


# ---------------------------------------------------------------- framing (trusted side <-> supervisor)

def encode(obj) -> bytes:
    def enc(o):
        if isinstance(o, bytes):
            return {"__b64": base64.b64encode(o).decode()}
        if isinstance(o, dict):
            return {k: enc(v) for k, v in o.items()}
        if isinstance(o, (list, tuple)):
            return [enc(v) for v in o]
        return o

    data = json.dumps(enc(obj)).encode()
    return struct.pack(">I", len(data)) + data


def decode(data: bytes):
    def dec(o):
        if isinstance(o, dict):
            if len(o) == 1 and "__b64" in o:
                return base64.b64decode(o["__b64"])
            return {k: dec(v) for k, v in o.items()}
        if isinstance(o, list):
            return [dec(v) for v in o]
        return o

    return dec(json.loads(data))


def read_exact(fd: int, n: int) -> bytes:
    chunks, left = [], n
    while left:
        chunk = os.read(fd, left)
        if not chunk:
            raise EOFError("peer closed")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def recv_frame(fd: int):
    (size,) = struct.unpack(">I", read_exact(fd, 4))
    return decode(read_exact(fd, size))


def send_frame(fd: int, obj) -> None:
    data = encode(obj)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


# ---------------------------------------------------------------- seccomp

class CompiledFilter:
    """A seccomp BPF program compiled once by libseccomp; loading it in each child is one prctl call."""

    def __init__(self, filt) -> None:
        import ctypes

        with open(os.memfd_create("bpf"), "w+b") as f:
            filt.export_bpf(f)
            f.seek(0)
            program = f.read()
        if not program or len(program) % 8:
            raise RuntimeError("libseccomp exported an empty or malformed BPF program")

        class SockFprog(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

        self._buf = ctypes.create_string_buffer(program, len(program))
        self._prog = SockFprog(len(program) // 8, ctypes.cast(self._buf, ctypes.c_void_p))
        self._prctl = ctypes.CDLL(None, use_errno=True).prctl
        self._prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
        self._ref = ctypes.addressof(self._prog)

    def load(self) -> None:
        import ctypes

        if self._prctl(38, 1, None, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
            raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS failed")
        if self._prctl(22, 2, self._ref, 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
            raise OSError(ctypes.get_errno(), "PR_SET_SECCOMP failed")


def build_seccomp():
    """A filter denying DENIED_SYSCALLS and namespace-creating clone (libseccomp builds it, once)."""
    if "/usr/lib/python3/dist-packages" not in sys.path:
        sys.path.append("/usr/lib/python3/dist-packages")
    try:
        import seccomp
    except ImportError as exc:
        raise RuntimeError("python3-seccomp is missing inside the sandbox (apt-get install python3-seccomp)") from exc
    filt = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    for name in DENIED_SYSCALLS:
        try:
            filt.add_rule(seccomp.ERRNO(errno.EPERM), name)
        except (RuntimeError, ValueError, OSError):
            pass  # not a syscall on this architecture
    for flag in NAMESPACE_FLAGS:
        filt.add_rule(seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    filt.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")  # flags live in memory; glibc falls back to clone
    return CompiledFilter(filt)


# ---------------------------------------------------------------- the child (untrusted side)

def _child(spec: dict, ctx: Context, fds: dict) -> None:
    """Runs in the forked child; never returns."""
    try:
        os.setsid()
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")  # the OOM killer takes the job, never the worker sharing its cgroup
        os.dup2(fds["stdin"], 0)
        os.dup2(fds["out_w"], 1)
        os.dup2(fds["err_w"], 2)
        _close_all_but(fds["go_r"], fds["status_w"])
        if os.read(fds["go_r"], 1) != b"g":
            os._exit(126)
        os.close(fds["go_r"])
        _apply_rlimits(spec["limits"])
        os.setgroups([])
        os.setresgid(ctx.uid, ctx.uid, ctx.uid)
        os.setresuid(ctx.uid, ctx.uid, ctx.uid)
        ctx.set_dumpable()  # a uid change clears it; without it the job cannot read its own /proc/self
        ctx.clear_capabilities()
        os.umask(0o022)
        os.chdir(JOB_DIR)
        for path, content in spec["files"]:
            _write_job_file(path, content)
        env = {"PATH": PATH, "HOME": JOB_DIR, "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1", "TMPDIR": "/tmp"}
        if spec.get("evidence"):
            env["RLVR_NONCE_FILE"] = os.path.join(JOB_DIR, NONCE_FILENAME)
        env.update(spec.get("env") or {})
        if not ctx.locked_down:
            ctx.seccomp.load()
    except BaseException as exc:  # setup failed: tell the trusted side, which reports sandbox_error
        try:
            os.write(fds["status_w"], f"setup: {type(exc).__name__}: {exc}".encode()[:2000])
        finally:
            os._exit(125)
    if spec.get("code_fast") and ctx.fast_code:
        os.close(fds["status_w"])
        _run_python_inline(env, ctx.streams)
    try:
        os.execvpe(spec["argv"][0], spec["argv"], env)
    except OSError as exc:
        os.write(2, f"{spec['argv'][0]}: {exc.strerror}\n".encode())
        os._exit(127 if exc.errno == errno.ENOENT else 126)


def _close_all_but(*keep: int) -> None:
    low = 3
    for fd in sorted(keep):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, resource.getrlimit(resource.RLIMIT_NOFILE)[0])


def _apply_rlimits(limits: dict) -> None:
    mem = limits["memory_mb"] << 20
    cpu = max(1, int(-(-limits["cpu_s"] // 1)))
    for res, value in (
        (resource.RLIMIT_AS, (mem, mem)),
        (resource.RLIMIT_CPU, (cpu, cpu + 1)),
        (resource.RLIMIT_FSIZE, (limits["file_size_mb"] << 20,) * 2),
        (resource.RLIMIT_NOFILE, (limits["open_files"],) * 2),
        (resource.RLIMIT_NPROC, (limits["processes"],) * 2),
        (resource.RLIMIT_CORE, (0, 0)),
        (resource.RLIMIT_MSGQUEUE, (0, 0)),
    ):
        resource.setrlimit(res, value)


def _write_job_file(path: str, content: bytes) -> None:
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    try:
        view = memoryview(content)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def std_streams() -> tuple:
    """Fresh, unused sys.stdin/stdout/stderr objects on fds 0/1/2 (the worker builds them once, before forking)."""
    import io

    return (
        io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)), encoding="utf-8"),
        io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)), encoding="utf-8"),
        io.TextIOWrapper(io.BufferedWriter(io.FileIO(2, "w", closefd=False)), encoding="utf-8",
                         errors="backslashreplace", line_buffering=True),
    )


def _run_python_inline(env: dict, streams: tuple | None) -> None:
    """``python3 main.py`` without a new interpreter: the warm worker's fork runs the script directly."""
    import builtins
    import types

    os.environ.clear()
    os.environ.update(env)
    sys.argv = ["main.py"]
    sys.path[:] = [JOB_DIR] + [p for p in sys.path if p.startswith("/usr/lib")]
    sys.stdin, sys.stdout, sys.stderr = streams or std_streams()
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr
    main = types.ModuleType("__main__")
    main.__file__ = os.path.join(JOB_DIR, "main.py")
    main.__builtins__ = builtins
    sys.modules["__main__"] = main
    code = 0
    try:
        with open("main.py", "rb") as f:
            source = f.read()
        exec(compile(source, main.__file__, "exec"), main.__dict__)
    except SystemExit as exc:
        code = _exit_code(exc.code)
    except BaseException as exc:
        tb = exc.__traceback__.tb_next if exc.__traceback__ else None
        sys.excepthook(type(exc), exc, tb)
        code = 1
    _finish(code)


def _exit_code(value) -> int:
    if value is None:
        return 0
    if isinstance(value, int):
        return value & 0xFF
    print(value, file=sys.stderr)
    return 1


def _finish(code: int) -> None:
    import atexit

    try:
        if "threading" in sys.modules:
            sys.modules["threading"]._shutdown()
        atexit._run_exitfuncs()
    except SystemExit as exc:
        code = _exit_code(exc.code)
    except BaseException:
        code = code or 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            code = code or 120
    os._exit(code)


# ---------------------------------------------------------------- trusted side

def run_job(spec: dict, ctx: Context) -> dict:
    """Run one job to completion and return the raw outcome (status already classified)."""
    limits = spec["limits"]
    if not ctx.job_dir_ready:
        _reset_job_dir(ctx)
    ctx.job_dir_ready = False
    oom_before = _oom_count(ctx)
    _set_cgroup_limits(ctx, limits)
    stdin = os.memfd_create("stdin")
    os.write(stdin, spec.get("stdin") or b"")
    os.lseek(stdin, 0, os.SEEK_SET)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    go_r, go_w = os.pipe()
    status_r, status_w = os.pipe2(os.O_CLOEXEC)
    fds = {"stdin": stdin, "out_w": out_w, "err_w": err_w, "go_r": go_r, "status_w": status_w}
    evidence = bool(spec.get("evidence"))
    if not evidence:  # nothing to prepare after the fork: let the child start at once
        os.chown(JOB_DIR, ctx.uid, ctx.uid)
        os.write(go_w, b"g")
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        _child(spec, ctx, fds)
    for fd in (stdin, out_w, err_w, go_r, status_w):
        os.close(fd)
    pidfd = os.pidfd_open(pid)
    nonce = None
    try:
        if evidence:
            nonce = os.urandom(16).hex()  # created after the fork: the child's memory never held it
            fd = os.open(os.path.join(JOB_DIR, NONCE_FILENAME), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                         0o444)
            os.write(fd, nonce.encode())
            os.close(fd)
            os.chown(JOB_DIR, ctx.uid, ctx.uid)
            os.write(go_w, b"g")
        os.close(go_w)
        outcome = _supervise(pid, pidfd, out_r, err_r, status_r, limits, start)
    finally:
        os.close(status_r)
        os.close(pidfd)
    setup_error = outcome["setup_error"]
    _, wstatus, usage = os.wait4(pid, 0)
    duration = time.monotonic() - start
    leftovers, collected = kill_and_wipe(ctx, spec.get("collect") or [])
    outcome["stdout"] += _drain(out_r, outcome, limits)
    outcome["stderr"] += _drain(err_r, outcome, limits)
    os.close(out_r)
    os.close(err_r)
    result = {
        "exit_code": os.WEXITSTATUS(wstatus) if os.WIFEXITED(wstatus) else None,
        "signal": os.WTERMSIG(wstatus) if os.WIFSIGNALED(wstatus) else None,
        "stdout": outcome["stdout"],
        "stderr": outcome["stderr"],
        "duration": duration,
        "cpu": usage.ru_utime + usage.ru_stime,
        "nonce": nonce,
        "files": {},
        "dirty": leftovers,
    }
    if setup_error:
        result.update(status="sandbox_error", reason=setup_error.decode(errors="replace"))
        return result
    result["files"] = collected
    result["status"], result["reason"] = classify(result, outcome, limits, _oom_count(ctx) > oom_before)
    return result


def collect_files(paths: list[str]) -> dict:
    """Read requested job files: regular files inside the job dir only, no symlink followed."""
    found = {}
    for path in paths:
        full = os.path.join(JOB_DIR, path)
        if not os.path.realpath(os.path.dirname(full)).startswith(JOB_DIR):
            continue
        try:
            fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            import stat

            if stat.S_ISREG(os.fstat(fd).st_mode):
                found[path] = os.read(fd, COLLECT_MAX_BYTES)
        finally:
            os.close(fd)
    return found


def classify(result: dict, outcome: dict, limits: dict, oom: bool) -> tuple[str, str]:
    sig = result["signal"]
    if outcome["reason"] == "output":
        return "output_limit", f"stdout+stderr exceeded {limits['output_bytes']} bytes"
    if outcome["reason"] == "wall":
        return "timeout", f"wall-clock limit {limits['wall_s']}s"
    if sig == signal.SIGXCPU or (sig == signal.SIGKILL and result["cpu"] >= limits["cpu_s"] - 0.05):
        return "timeout", f"CPU limit {limits['cpu_s']}s"
    if oom:
        return "memory", f"memory limit {limits['memory_mb']} MB (OOM kill)"
    if result["exit_code"] not in (None, 0) and _last_line(result["stderr"]).startswith(b"MemoryError"):
        return "memory", f"memory limit {limits['memory_mb']} MB (MemoryError)"
    if sig is not None:
        return "killed", f"terminated by signal {sig}"
    if result["exit_code"] != 0:
        return "error", f"exit code {result['exit_code']}"
    return "ok", ""


def _last_line(data: bytes) -> bytes:
    lines = [line for line in data.splitlines() if line.strip()]
    return lines[-1].strip() if lines else b""


def _supervise(pid: int, pidfd: int, out_r: int, err_r: int, status_r: int, limits: dict, start: float) -> dict:
    """Pump output until the child exits, the wall clock runs out or output overflows; kill on a limit.

    ``status_r`` carries a setup error from the child (it reaches EOF silently when the job starts); it is read
    only once the child is gone, so a normal start costs no extra wake-up.
    """
    deadline = start + limits["wall_s"]
    cap = limits["output_bytes"]
    bufs = {out_r: bytearray(), err_r: bytearray(), status_r: bytearray()}
    poller = select.poll()
    for fd in (out_r, err_r, pidfd):
        poller.register(fd, select.POLLIN)
    for fd in (out_r, err_r, status_r):
        os.set_blocking(fd, False)
    reason = None
    while reason is None:
        left = deadline - time.monotonic()
        if left <= 0:
            reason = "wall"
            break
        events = poller.poll(max(1, int(left * 1000)))
        exited = False
        for fd, ev in events:
            if fd == pidfd:
                exited = True
            elif ev & (select.POLLIN | select.POLLHUP):
                if not _pump(fd, bufs[fd]):
                    poller.unregister(fd)
        if len(bufs[out_r]) + len(bufs[err_r]) > cap:
            reason = "output"
        elif exited:
            reason = "exit"
    if reason != "exit":
        _kill_group(pid)
    if reason == "exit":
        while _pump(status_r, bufs[status_r]) and len(bufs[status_r]) < 4096:
            pass
    out = bytes(bufs[out_r][:cap])
    return {"reason": reason, "stdout": out, "stderr": bytes(bufs[err_r][: cap - len(out)]),
            "setup_error": bytes(bufs[status_r])}


def _pump(fd: int, buf: bytearray) -> bool:
    try:
        chunk = os.read(fd, 1 << 16)
    except BlockingIOError:
        return True
    if not chunk:
        return False
    buf += chunk
    return True


def _drain(fd: int, outcome: dict, limits: dict) -> bytes:
    """What is left in a pipe after every writer is dead, within the output cap."""
    room = limits["output_bytes"] - len(outcome["stdout"]) - len(outcome["stderr"])
    got = bytearray()
    os.set_blocking(fd, False)
    while room > len(got):
        try:
            chunk = os.read(fd, 1 << 16)
        except (BlockingIOError, OSError):
            break
        if not chunk:
            break
        got += chunk
    if len(got) > max(room, 0):
        outcome["reason"] = "output"
    return bytes(got[: max(room, 0)])


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def kill_and_wipe(ctx: Context, collect: list[str]) -> tuple[bool, dict]:
    """Kill every process of the job uid, collect files, empty the scratch dirs.

    Returns (dirty, collected files); dirty means a process or file survived and the slot must be recycled.
    ``kill(-1)`` signals every process the caller may signal. It is only issued from a helper that has become
    the job uid (so it can reach nothing but the job's processes) *and* only inside a pid namespace that is
    not the host's (checked against the inode the supervisor passed in): two independent guards.
    """
    survivors = bool(_uid_pids(ctx.uid))
    if survivors:
        _kill_as_job_uid(ctx)
    files = collect_files(collect)
    for top in SCRATCH_DIRS:
        _wipe_children(top)
    dirty = (survivors and bool(_uid_pids(ctx.uid))) or any(_leftover(top) for top in SCRATCH_DIRS)
    _reset_job_dir(ctx)
    ctx.job_dir_ready = True
    return dirty, files


def _kill_as_job_uid(ctx: Context) -> None:
    allowed = _pidns_inode() not in (None, ctx.host_pidns)
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setresgid(ctx.uid, ctx.uid, ctx.uid)
            os.setresuid(ctx.uid, ctx.uid, ctx.uid)
            if os.getuid() != ctx.uid or os.getuid() == 0:
                os._exit(4)
            if allowed:
                _kill_all_as_self()
            else:
                _kill_listed(_uid_pids(ctx.uid))
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def _kill_all_as_self() -> None:
    me = os.getpid()
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            return
        pids = [p for p in _uid_pids(os.getuid()) if p != me]
        if not pids or all(_is_zombie(p) for p in pids):
            return
        time.sleep(0.001)


def _kill_listed(pids: list[int]) -> None:
    me = os.getpid()
    for _ in range(3):
        for p in pids:
            if p != me:
                try:
                    os.kill(p, signal.SIGKILL)
                except OSError:
                    pass
        pids = [p for p in _uid_pids(os.getuid()) if p != me and not _is_zombie(p)]
        if not pids:
            return
        time.sleep(0.005)


def _uid_pids(uid: int) -> list[int]:
    me = os.getpid()
    pids = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != me:
            try:
                if os.stat(f"/proc/{name}").st_uid == uid and not _is_zombie(int(name)):
                    pids.append(int(name))
            except OSError:
                pass
    return pids


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X")
    except (OSError, IndexError):
        return True


def _pidns_inode() -> int | None:
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return None


def _wipe_children(top: str) -> None:
    try:
        entries = os.listdir(top)
    except OSError:
        return
    for name in entries:
        _wipe(os.path.join(top, name))


def _wipe(path: str) -> None:
    import stat

    try:
        st = os.lstat(path)
    except OSError:
        return
    if stat.S_ISDIR(st.st_mode):
        try:
            os.chmod(path, 0o700)
        except OSError:
            pass
        _wipe_children(path)
        try:
            os.rmdir(path)
        except OSError:
            pass
    else:
        try:
            os.unlink(path)
        except OSError:
            pass


def _leftover(top: str) -> bool:
    try:
        return bool(os.listdir(top))
    except OSError:
        return False


def _reset_job_dir(ctx: Context) -> None:
    """A fresh, root-owned job dir (handed to the job uid just before the job starts)."""
    try:
        os.mkdir(JOB_DIR, 0o755)
    except FileExistsError:
        os.chown(JOB_DIR, 0, 0)
    os.chmod(JOB_DIR, 0o755)


def _oom_count(ctx: Context) -> int:
    if not ctx.oom_control:
        return 0
    try:
        with open(ctx.oom_control) as f:
            for line in f:
                if line.startswith("oom_kill "):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _set_cgroup_limits(ctx: Context, limits: dict) -> None:
    wanted = (limits["memory_mb"], limits["processes"])
    if ctx.cgroup_limits == wanted:
        return
    ctx.cgroup_limits = wanted
    if ctx.mem_cgroup:
        value = str((limits["memory_mb"] + WORKER_ALLOWANCE_MB) << 20)
        names = ("memory.limit_in_bytes", "memory.memsw.limit_in_bytes")
        for order in (names, names[::-1]):  # memsw >= limit must hold after each write
            try:
                for name in order:
                    path = os.path.join(ctx.mem_cgroup, name)
                    if os.path.exists(path):
                        with open(path, "w") as f:
                            f.write(value)
                break
            except OSError:
                continue
    if ctx.pids_cgroup:
        with open(os.path.join(ctx.pids_cgroup, "pids.max"), "w") as f:
            f.write(str(limits["processes"] + WORKER_ALLOWANCE_PIDS))
