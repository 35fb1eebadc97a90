"""Translation between the public request/result models and the framed dicts the in-sandbox code speaks."""

from __future__ import annotations

from .base import ExecRequest, ExecResult, Status, extract_evidence

IN_SANDBOX_DIR_NAME = "in_sandbox"


def to_spec(request: ExecRequest, inline_python: bool = True) -> dict:
    """The job as job_lifecycle.run_job expects it (plain JSON-able values and bytes).

    ``inline_python``: run ``code`` in a fork of the slot's warm template interpreter (fast) rather than exec'ing
    a new ``python3 main.py``. The template is a fresh interpreter that never receives any request's data, so
    neither mode lets a job find an earlier job's inputs in its memory.
    """
    seed = request.effective_hash_seed()
    env = dict(request.env)
    if seed is not None:
        env["PYTHONHASHSEED"] = str(seed)
    return {
        "argv": request.command(),
        "code_fast": inline_python and request.code is not None,
        "files": request.file_items(),
        "stdin": request.stdin_bytes(),
        "env": env,
        "hash_seed": seed,
        "limits": request.limits.model_dump(),
        "collect": list(request.collect),
        "evidence": request.evidence,
    }


def to_result(raw: dict, backend: str) -> ExecResult:
    """An ExecResult from job_lifecycle's raw outcome; evidence records are cut out of stdout here."""
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
