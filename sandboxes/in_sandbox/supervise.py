"""Watching one running job: pump its output, enforce wall/CPU/output limits, classify the outcome."""

from __future__ import annotations

import os
import select
import signal
import time

CPU_CHECK_MIN_S = 0.05


def supervise(pidfd: int, out_r: int, err_r: int, limits: dict, start: float, cpu_used) -> dict:
    """Pump output until the job's main process exits or a limit is hit (``reason``: exit/wall/output/cpu).

    ``cpu_used()`` is the CPU time of the whole job (all its processes, dead ones too) or None. It is read only
    when the budget could be spent by then at full use of every core, so an honest job costs no extra wake-ups.
    """
    deadline = start + limits["wall_s"]
    cap = limits["output_bytes"]
    cores = os.cpu_count() or 1
    bufs = {out_r: bytearray(), err_r: bytearray()}
    poller = select.poll()
    for fd in (out_r, err_r, pidfd):
        poller.register(fd, select.POLLIN)
    for fd in (out_r, err_r):
        os.set_blocking(fd, False)
    metered = cpu_used() is not None
    next_cpu_check = start + max(CPU_CHECK_MIN_S, limits["cpu_s"] / cores) if metered else float("inf")
    reason = None
    while reason is None:
        now = time.monotonic()
        if now >= deadline:
            reason = "wall"
            break
        if now >= next_cpu_check:
            left = limits["cpu_s"] - cpu_used()
            if left <= 0:
                reason = "cpu"
                break
            next_cpu_check = now + max(CPU_CHECK_MIN_S, left / cores)
        wake = min(deadline, next_cpu_check) - now
        events = poller.poll(max(1, int(wake * 1000)))
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
    out = bytes(bufs[out_r][:cap])
    return {"reason": reason, "stdout": out, "stderr": bytes(bufs[err_r][: cap - len(out)])}


def _pump(fd: int, buf: bytearray) -> bool:
    try:
        chunk = os.read(fd, 1 << 16)
    except BlockingIOError:
        return True
    if not chunk:
        return False
    buf += chunk
    return True


def drain(fd: int, room: int) -> tuple[bytes, bool]:
    """What is left in a pipe once every writer is dead: (at most ``room`` bytes, whether there was more)."""
    got = bytearray()
    os.set_blocking(fd, False)
    while room >= len(got):
        try:
            chunk = os.read(fd, 1 << 16)
        except OSError:
            break
        if not chunk:
            break
        got += chunk
    return bytes(got[: max(room, 0)]), len(got) > max(room, 0)


def read_setup_error(fd: int) -> bytes:
    os.set_blocking(fd, False)
    data = bytearray()
    while len(data) < 4096:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    return bytes(data)


def classify(result: dict, reason: str, limits: dict, oom: bool) -> tuple[str, str]:
    """(status, explanation) in the precedence documented in sandboxes/base.py."""
    sig = result["signal"]
    if reason == "output":
        return "output_limit", f"stdout+stderr exceeded {limits['output_bytes']} bytes"
    if reason == "wall":
        return "timeout", f"wall-clock limit {limits['wall_s']}s"
    if reason == "cpu" or sig == signal.SIGXCPU or (sig == signal.SIGKILL and result["cpu"] >= limits["cpu_s"] - 0.05):
        return "timeout", f"CPU limit {limits['cpu_s']}s (all the job's processes together)"
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
