"""The job's own process: forked from the clean template (zygote.py), it confines itself, then runs the job.

Order matters: join the job cgroups while still root, take its stdio, close everything else, set rlimits,
drop to the per-job uid (which also drops every capability), and only then run untrusted code, either in this
already-warm interpreter (``code_fast``) or by exec. The seccomp filter was loaded by the template and is
inherited. The job's data (argv, env, limits) arrives on a descriptor read here, after the fork, so the
template never holds any job's data.
"""

from __future__ import annotations

import errno
import json
import os
import resource
import sys

try:
    from . import privileges
    from .paths import JOB_DIR, NONCE_FILENAME, PATH
except ImportError:
    import privileges
    from paths import JOB_DIR, NONCE_FILENAME, PATH

SPEC, STDIN, STDOUT, STDERR, STATUS = range(5)  # order of the descriptors the worker sends


def enter_job(cgroup) -> BaseException | None:
    """The part of the setup that needs no job data: own session, the slot's job cgroups (done ahead of time by
    a pre-forked child, since a cgroup v1 move can wait for an RCU grace period). The error, if any."""
    try:
        os.setsid()
        cgroup.join()
    except BaseException as exc:  # reported once the job's status pipe has arrived
        return exc
    return None


def run(fds: list[int], cgroup, streams, entered: BaseException | None | bool = False) -> None:
    """Never returns. ``entered``: enter_job's outcome if it already ran in this process, else False."""
    try:
        if entered is False:
            entered = enter_job(cgroup)
        if entered is not None:
            raise entered
        spec = json.loads(_read_all(fds[SPEC]))
        for target, index in ((0, STDIN), (1, STDOUT), (2, STDERR)):
            os.dup2(fds[index], target)
        _close_all_but(fds[STATUS])
        apply_rlimits(spec["limits"])
        uid = spec["uid"]
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        privileges.set_dumpable()
        privileges.clear_all_capabilities()
        os.umask(0o022)
        os.chdir(JOB_DIR)
        env = {"PATH": PATH, "HOME": JOB_DIR, "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1", "TMPDIR": "/tmp"}
        if spec.get("evidence"):
            env["RLVR_NONCE_FILE"] = os.path.join(JOB_DIR, NONCE_FILENAME)
        env.update(spec.get("env") or {})
    except BaseException as exc:  # setup failed: tell the trusted side, which reports sandbox_error
        try:
            os.write(fds[STATUS], f"setup: {type(exc).__name__}: {exc}".encode()[:2000])
        finally:
            os._exit(125)
    if spec.get("code_fast"):
        os.close(fds[STATUS])
        del spec
        run_python_inline(env, streams)
    try:
        os.execvpe(spec["argv"][0], spec["argv"], env)
    except OSError as exc:
        os.write(2, f"{spec['argv'][0]}: {exc.strerror}\n".encode())
        os._exit(127 if exc.errno == errno.ENOENT else 126)


def _read_all(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)


def _close_all_but(keep: int) -> None:
    os.closerange(3, keep)
    os.closerange(keep + 1, resource.getrlimit(resource.RLIMIT_NOFILE)[0])


def apply_rlimits(limits: dict) -> None:
    """Per-process backstops; the cgroup limits the job as a whole (memory, processes, CPU time)."""
    mem = limits["memory_mb"] << 20
    cpu = max(1, int(-(-limits["cpu_s"] // 1))) + 1
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


def std_streams() -> tuple:
    """Fresh sys.stdin/stdout/stderr objects on fds 0/1/2 (the template builds them once, before any fork)."""
    import io

    return (
        io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)), encoding="utf-8"),
        io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)), encoding="utf-8"),
        io.TextIOWrapper(
            io.BufferedWriter(io.FileIO(2, "w", closefd=False)),
            encoding="utf-8",
            errors="backslashreplace",
            line_buffering=True,
        ),
    )


def run_python_inline(env: dict, streams: tuple) -> None:
    """``python3 main.py`` without a new interpreter: the template's fork runs the script directly."""
    import builtins
    import types

    os.environ.clear()
    os.environ.update(env)
    sys.argv = ["main.py"]
    sys.path[:] = [JOB_DIR] + [p for p in sys.path if p.startswith("/usr/lib")]
    sys.stdin, sys.stdout, sys.stderr = streams
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
