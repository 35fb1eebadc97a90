"""Run one job inside a sandbox: prepare its files, fork it from the clean template, supervise, kill, wipe, classify.

This runs *inside* the isolation boundary under Debian's ``/usr/bin/python3`` (stdlib only). The local
backend's warm worker and the container backend's worker both call :func:`run_job`, so the two backends
classify every outcome with the same code. The modules around it each do one thing:

* ``template``/``zygote``/``child``: the job process (forked from a template that never saw job data; confined
  by cgroup, per-job uid, rlimits, no capabilities, seccomp from ``seccomp_filter``).
* ``jobcgroup`` (``uidkill`` without cgroups): job-wide limits and the kill of everything the job started.
* ``cleanup``: root-run file handling that follows no link and does not recurse.
* ``supervise``: output pumping, wall/CPU/output limits, classification.
* ``framing``: the supervisor protocol.

The process calling :func:`run_job` is trusted (uid 0 in its namespaces, a few capabilities).
"""

from __future__ import annotations

import json
import os
import time

try:
    from . import cleanup, uidkill
    from .framing import decode, encode, recv_frame, send_frame  # noqa: F401  (re-exported for the host side)
    from .jobcgroup import JobCgroup
    from .paths import JOB_DIR, PATH  # noqa: F401
    from .supervise import classify, drain, read_setup_error, supervise
    from .template import Template, TemplateError
except ImportError:
    import cleanup
    import uidkill
    from framing import decode, encode, recv_frame, send_frame  # noqa: F401
    from jobcgroup import JobCgroup
    from paths import JOB_DIR, PATH  # noqa: F401
    from supervise import classify, drain, read_setup_error, supervise
    from template import Template, TemplateError

UID_ROTATION = 4096  # distinct uids a slot cycles through, one per job
MAX_SLOTS = 64  # slots per sandbox instance; an instance owns MAX_SLOTS * UID_ROTATION uids
REAP_TIMEOUT_S = 10.0
MAX_TEMPLATES = 3


class Context:
    """What the trusted side knows about its slot, and its template processes."""

    def __init__(self, uid_base: int, host_pidns: int | None, fast_code: bool = True, seccomp: bool = True):
        if uid_base < 1000:
            raise ValueError("job uids must be >= 1000")
        if host_pidns is None or uidkill.pidns_inode() in (None, host_pidns):
            # run_job wipes /tmp and kills by uid: never do that in the host's namespaces
            raise RuntimeError("refusing to run jobs outside a sandbox pid namespace")
        self.uid_base = uid_base
        self.host_pidns = host_pidns
        self.fast_code = fast_code
        self.seccomp = seccomp
        self.jobs = 0
        self.cgroup = JobCgroup()
        self.templates: dict[str | None, Template] = {}

    def next_uid(self) -> int:
        """A different uid for every job of this slot (processes, files and per-user kernel limits never shared)."""
        uid = self.uid_base + self.jobs % UID_ROTATION
        self.jobs += 1
        return uid

    def template(self, hash_seed: str | None) -> Template:
        current = self.templates.get(hash_seed)
        if current is not None and not current.alive():
            current.stop()
            current = None
        if current is None:
            if len(self.templates) >= MAX_TEMPLATES:
                oldest = next(k for k in self.templates if k is not None)
                self.templates.pop(oldest).stop()
            current = self.templates[hash_seed] = Template(hash_seed, self.seccomp)
        return current

    def drop_template(self, hash_seed: str | None) -> None:
        template = self.templates.pop(hash_seed, None)
        if template is not None:
            template.stop()


def run_job(spec: dict, ctx: Context) -> dict:
    """Run one job to completion and return the raw outcome (status already classified)."""
    limits = spec["limits"]
    uid = ctx.next_uid()
    cleanup.reset_job_dir()
    nonce = os.urandom(16).hex() if spec.get("evidence") else None
    cleanup.write_job_files(spec.get("files") or [], uid, nonce)
    cg = ctx.cgroup
    cg.set_limits(limits["memory_mb"], limits["processes"])
    cg.reset_cpu()
    oom_before = cg.oom_kills()
    seed = spec.get("hash_seed")
    child_spec = {
        "argv": spec["argv"],
        "env": spec.get("env") or {},
        "limits": limits,
        "uid": uid,
        "code_fast": bool(spec.get("code_fast")) and ctx.fast_code,
        "evidence": nonce is not None,
    }
    spec_fd = _memfd("spec", json.dumps(child_spec).encode())
    stdin = _memfd("stdin", spec.get("stdin") or b"")
    out_r, out_w = os.pipe2(os.O_CLOEXEC)
    err_r, err_w = os.pipe2(os.O_CLOEXEC)
    status_r, status_w = os.pipe2(os.O_CLOEXEC)
    template = ctx.template(None if seed is None else str(seed))
    start = time.monotonic()
    try:
        template.spawn([spec_fd, stdin, out_w, err_w, status_w])
    finally:
        for fd in (spec_fd, stdin, out_w, err_w, status_w):
            os.close(fd)
    try:
        outcome = supervise(template.fileno, out_r, err_r, limits, start, cg.cpu_seconds)
        duration = time.monotonic() - start
        killed_all = cg.kill_all() if cg.contains_jobs else True
        killed_all = uidkill.kill_uid(uid, ctx.host_pidns) and killed_all
        try:
            wstatus, main_cpu = template.wait(REAP_TIMEOUT_S)
        except (TemplateError, OSError):
            ctx.drop_template(seed)
            raise
        setup_error = read_setup_error(status_r)
        room = limits["output_bytes"] - len(outcome["stdout"]) - len(outcome["stderr"])
        more_out, over = drain(out_r, room)
        more_err, over_err = drain(err_r, room - len(more_out))
    finally:
        for fd in (out_r, err_r, status_r):
            os.close(fd)
    if over or over_err:
        outcome["reason"] = "output"
    collected = cleanup.collect_files(spec.get("collect") or [])
    wiped = cleanup.wipe_scratch()
    if killed_all and wiped:
        template.prefork()
    cpu = cg.cpu_seconds()
    result = {
        "exit_code": os.WEXITSTATUS(wstatus) if os.WIFEXITED(wstatus) else None,
        "signal": os.WTERMSIG(wstatus) if os.WIFSIGNALED(wstatus) else None,
        "stdout": outcome["stdout"] + more_out,
        "stderr": outcome["stderr"] + more_err,
        "duration": duration,
        "cpu": cpu if cpu is not None else main_cpu,
        "nonce": nonce,
        "files": {},
        "dirty": not (killed_all and wiped),
    }
    if setup_error:
        result.update(status="sandbox_error", reason=setup_error.decode(errors="replace"))
        return result
    result["files"] = collected
    result["status"], result["reason"] = classify(result, outcome["reason"], limits, cg.oom_kills() > oom_before)
    return result


def _memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(name, os.MFD_CLOEXEC)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
