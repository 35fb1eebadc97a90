"""Translation between the public request/result models and the framed dicts the in-sandbox code speaks."""

from __future__ import annotations

from .base import ExecRequest, ExecResult, Status, extract_evidence

INSIDE_DIR_NAME = "_inside"


def to_spec(request: ExecRequest, inline_python: bool = True) -> dict:
    """The job as jobcore.run_job expects it (plain JSON-able values and bytes).

    ``inline_python``: run ``code`` in the warm worker's forked interpreter (fast) rather than exec'ing a new
    ``python3 main.py``. A fork inherits the worker's address space, whose freed heap may still hold bytes of
    earlier requests; a job scanning raw memory could find them. Pass False when requests carry secrets that
    other jobs must not see (an exec replaces the address space; ~15 ms more per job).
    """
    return {
        "argv": request.command(),
        "code_fast": inline_python and request.code is not None,
        "files": request.file_items(),
        "stdin": request.stdin_bytes(),
        "env": dict(request.env),
        "limits": request.limits.model_dump(),
        "collect": list(request.collect),
        "evidence": request.evidence,
    }


def to_result(raw: dict, backend: str) -> ExecResult:
    """An ExecResult from jobcore's raw outcome; evidence records are cut out of stdout here."""
    stdout = (raw.get("stdout") or b"").decode("utf-8", errors="replace")
    stderr = (raw.get("stderr") or b"").decode("utf-8", errors="replace")
    evidence: list[dict] = []
    if raw.get("nonce"):
        stdout, evidence = extract_evidence(stdout, raw["nonce"])
    status = Status(raw.get("status", "sandbox_error"))
    return ExecResult(
        status=status,
        exit_code=raw.get("exit_code"),
        signal=raw.get("signal"),
        stdout=stdout,
        stderr=stderr,
        duration_s=float(raw.get("duration") or 0.0),
        files=raw.get("files") or {},
        evidence=evidence,
        error=raw.get("reason") or None if status is not Status.OK else None,
        backend=backend,
    )
