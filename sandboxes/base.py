"""The sandbox protocol: one request/result shape for every isolated-execution backend.

Untrusted model code (code tasks, RoboEval, tool tasks) runs through ``Sandbox.run(ExecRequest) -> ExecResult``.
Backends (``local``: warm fork-server workers inside bubblewrap; ``docker``: containers through the Docker Engine
API) must give the same ``ExecResult.status`` for the same request; a shared parametrized test suite checks this.

Using it
--------
::

    from rlvr_gym.sandboxes import ExecRequest, Limits, get_sandbox
    box = get_sandbox("local")            # or "docker"; a process-wide shared, thread-safe instance
    result = box.run(ExecRequest(code=src, limits=Limits(wall_s=5, memory_mb=256)))
    result = await box.arun(request)      # from asyncio (runs in a thread; never blocks the loop)

A sandbox never raises for a job's failure: every outcome, its own breakdown included, is an ``ExecResult``
(``sandbox_error`` with ``error`` set). Only construction raises ``SandboxUnavailable``, naming what is missing.

Semantics every backend honours
-------------------------------
* ``code`` runs as the script ``main.py`` in a fresh, empty job directory ``/tmp/job`` (the working directory)
  with the sandbox's own ``python3`` (Debian's 3.11, stdlib only; the local backend runs it in a warm fork of the
  interpreter instead of starting a new one); ``argv`` runs a program instead (resolved on
  ``PATH=/usr/local/bin:/usr/bin:/bin``; ``["python3", "-c", src]`` works). Exactly one of the two is given.
* ``files`` are written into the job directory first (relative paths only). Nothing survives a job: the job
  directory, ``/tmp``, SysV IPC objects and every process the job started are wiped before the next one.
* ``/tmp`` and the job directory share the ``Limits.disk_mb`` quota; ``HOME`` is the job directory.
* The environment is exactly ``PATH``, ``HOME``, ``TMPDIR=/tmp``, ``LANG=C.UTF-8``,
  ``PYTHONDONTWRITEBYTECODE=1``, plus ``ExecRequest.env``: nothing of the host's environment leaks in.
* Deterministic mode: ``ExecRequest(hash_seed=0)`` (or ``env={"PYTHONHASHSEED": "0"}``) fixes str/bytes hashing
  of the job's Python, on the warm path too (jobs then fork from a template started with that seed).
* ``Limits.memory_mb`` bounds each process's address space (RLIMIT_AS, so Python raises ``MemoryError``) and
  all the job's processes together (cgroup); ``processes`` counts processes and threads of the job.
* No network (``Limits.network`` must stay False; True gives ``sandbox_error``), no other processes visible,
  no host files other than a read-only allowlist of system directories.

Status, decided in this order
-----------------------------
``sandbox_error``  the sandbox itself failed (bad request, backend down); ``error`` holds why.
``output_limit``   stdout + stderr exceeded ``Limits.output_bytes`` (the job is killed at that point).
``timeout``        wall-clock or CPU limit exceeded.
``memory``         memory limit exceeded (killed by the cgroup OOM killer, or died of ``MemoryError``).
``killed``         terminated by a signal for any other reason (segfault, abort, a signal it sent itself).
``error``          exited with a non-zero code.
``ok``             exited with code 0. **Exit code 0 proves nothing** (``os._exit(0)`` before the asserts):
                   verifiers must read evidence, see below.

Evidence channel (for test harnesses)
-------------------------------------
Set ``ExecRequest(evidence=True)``. The sandbox then writes a fresh random nonce (128 bits) into a file of the
job directory named by the environment variable ``RLVR_NONCE_FILE`` before the job starts; the nonce never
appears in the request, in argv, or in the environment. The harness must, *before any untrusted code runs*:
read the nonce, delete the file, drop the variable, keep a private duplicate of fd 1, and bind every function
its reporter will call (a candidate can rebind ``json.dumps`` or ``os.write`` afterwards). Every record it then
writes as ``"\\n<nonce> <json-object>\\n"`` on that fd is cut out of ``stdout`` by the sandbox and returned,
parsed, in ``ExecResult.evidence`` (in order). Lines with a wrong or missing nonce stay in ``stdout`` and count
for nothing. ``EVIDENCE_CLIENT`` below is a ready-made harness prelude doing exactly this::

    harness = EVIDENCE_CLIENT + '''
    ns = {"__name__": "solution"}
    exec(compile(open("solution.py").read(), "solution.py", "exec"), ns)   # untrusted code, own namespace
    for i, test in enumerate(tests):
        try:
            exec(test, ns); _rlvr_report({"test": i, "passed": True})
        except BaseException as e:
            _rlvr_report({"test": i, "passed": False, "error": repr(e)[:200]})
    _rlvr_report({"done": True})
    '''
    result = sandbox.run(ExecRequest(code=harness, files={"solution.py": src}, evidence=True))
    passed = [r for r in result.evidence if r.get("passed")]

A verifier should count a test as passed only from an evidence record and should require the final ``done``
record (its absence means the process died or exited early, e.g. ``os._exit(0)``). What this defeats: exit
codes, printing fake results, writing fake result files, redirecting or closing ``sys.stdout``. What it does not
defeat: untrusted code that runs in the *same process* as the harness can in principle dig the nonce out of
memory (``gc``, frame/closure introspection, ``/proc/self/mem``). A harness that must resist that too should
evaluate the untrusted code's outputs in a process that never ran untrusted code.

Memory of earlier jobs: ``code`` runs in a fork of a warm *template* interpreter that was exec'd fresh and only
ever receives file descriptors, never a request's data; the job's files are written by the trusted worker and
its argv/env arrive on a descriptor after the fork. So a job scanning its own raw memory finds nothing of any
other job. ``inline_python=False`` execs ``python3 main.py`` per job instead (about 15 ms more).

Job identity and lifetime (both backends): every job runs under its own uid (rotating per slot), in its slot's
pid namespace with ``/proc`` mounted ``hidepid=invisible``, inside a per-job cgroup that it cannot leave; when
it ends the cgroup is frozen, every task in it killed and the cgroup checked empty before the slot is reused.
Memory, process count and CPU time are limits of the whole job (cgroup), CPU weight is per job. See
docs/sandboxes.md for the threat model and the adversarial test suite.
"""

from __future__ import annotations

import asyncio
import enum
import json
import re
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

NONCE_ENV = "RLVR_NONCE_FILE"
NONCE_FILENAME = ".rlvr_nonce"


class Status(str, enum.Enum):
    """Outcome class of one job (see the module docstring for the precedence)."""

    OK = "ok"
    ERROR = "error"
    TIMEOUT = "timeout"
    MEMORY = "memory"
    OUTPUT_LIMIT = "output_limit"
    KILLED = "killed"
    SANDBOX_ERROR = "sandbox_error"


class Limits(BaseModel):
    """Resource limits of one job. Defaults suit a short stdlib-only Python test run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    wall_s: float = Field(10.0, gt=0, le=3600, description="Wall-clock seconds before the job is killed.")
    cpu_s: float = Field(10.0, gt=0, le=3600, description="CPU seconds (all the job's processes together).")
    memory_mb: int = Field(256, ge=32, le=65536, description="Resident memory of all the job's processes.")
    output_bytes: int = Field(1_000_000, ge=1024, description="stdout + stderr bytes kept before the kill.")
    processes: int = Field(32, ge=1, le=4096, description="Processes/threads the job may run at once.")
    file_size_mb: int = Field(16, ge=1, description="Largest single file the job may write.")
    disk_mb: int = Field(64, ge=1, le=16384, description="Job directory + /tmp together.")
    open_files: int = Field(64, ge=16, le=65536, description="Open file descriptors per process.")
    network: bool = Field(False, description="Network access; no backend offers it yet (True is refused).")


class ExecRequest(BaseModel):
    """One job: Python ``code`` (run as ``main.py``) or an ``argv``, plus input files and stdin."""

    model_config = ConfigDict(extra="forbid")

    code: str | None = None
    argv: list[str] | None = None
    files: dict[str, str | bytes] = Field(default_factory=dict, description="Relative path -> content.")
    stdin: str | bytes = b""
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment variables.")
    limits: Limits = Field(default_factory=Limits)
    collect: list[str] = Field(default_factory=list, description="Relative paths returned in ExecResult.files.")
    evidence: bool = Field(False, description="Provide the nonce evidence channel (module docstring).")
    hash_seed: int | None = Field(
        None,
        ge=0,
        le=4294967295,
        description="Deterministic mode: PYTHONHASHSEED of "
        "the job's Python, inline or exec'd (None: random, or env['PYTHONHASHSEED']).",
    )

    @model_validator(mode="after")
    def _one_program(self) -> ExecRequest:
        if (self.code is None) == (self.argv is None):
            raise ValueError("give exactly one of `code` or `argv`")
        if self.argv is not None and not self.argv:
            raise ValueError("argv must not be empty")
        return self

    @field_validator("files", "collect")
    @classmethod
    def _relative_paths(cls, value):
        for path in value:
            if not safe_relpath(path):
                raise ValueError(f"unsafe path {path!r}: relative, no '..', no NUL")
        return value

    @field_validator("env")
    @classmethod
    def _env_names(cls, value: dict[str, str]) -> dict[str, str]:
        for key, val in value.items():
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key) or "\0" in val:
                raise ValueError(f"bad environment variable {key!r}")
            if key == NONCE_ENV:
                raise ValueError(f"{NONCE_ENV} is reserved")
        return value

    def effective_hash_seed(self) -> int | None:
        """``hash_seed``, else a numeric ``env["PYTHONHASHSEED"]`` (honoured by the warm path too)."""
        if self.hash_seed is not None:
            return self.hash_seed
        value = self.env.get("PYTHONHASHSEED", "")
        return int(value) if value.isdigit() and int(value) <= 4294967295 else None

    def stdin_bytes(self) -> bytes:
        return self.stdin.encode() if isinstance(self.stdin, str) else self.stdin

    def file_items(self) -> list[tuple[str, bytes]]:
        """Files as (path, bytes), ``main.py`` included when the request carries ``code``."""
        items = [(p, c.encode() if isinstance(c, str) else c) for p, c in self.files.items()]
        if self.code is not None:
            items.append(("main.py", self.code.encode()))
        return items

    def command(self) -> list[str]:
        return list(self.argv) if self.argv is not None else ["python3", "main.py"]


class ExecResult(BaseModel):
    """What happened to one job."""

    status: Status
    exit_code: int | None = Field(None, description="Exit code, or None when killed by a signal.")
    signal: int | None = Field(None, description="Terminating signal number, if any.")
    stdout: str = ""
    stderr: str = ""
    duration_s: float = 0.0
    files: dict[str, bytes] = Field(default_factory=dict, description="Collected files that existed.")
    evidence: list[dict] = Field(default_factory=list, description="Nonce-authenticated harness records.")
    error: str | None = Field(None, description="Sandbox-side explanation (sandbox_error, or which limit hit).")
    backend: str = ""

    @property
    def ok(self) -> bool:
        return self.status is Status.OK


@runtime_checkable
class Sandbox(Protocol):
    """An isolated executor. Implementations are thread-safe; ``arun`` never blocks the event loop."""

    name: str

    def run(self, request: ExecRequest) -> ExecResult: ...

    async def arun(self, request: ExecRequest) -> ExecResult: ...

    def close(self) -> None: ...


class BaseSandbox:
    """Shared behaviour: request screening, async wrapper, context manager."""

    name = "base"

    def run(self, request: ExecRequest) -> ExecResult:
        refused = screen_request(request)
        if refused is not None:
            return ExecResult(status=Status.SANDBOX_ERROR, error=refused, backend=self.name)
        try:
            return self._run(request)
        except Exception as exc:  # a sandbox must report, never raise, on a bad job
            return ExecResult(status=Status.SANDBOX_ERROR, error=f"{type(exc).__name__}: {exc}", backend=self.name)

    def _run(self, request: ExecRequest) -> ExecResult:
        raise NotImplementedError

    async def arun(self, request: ExecRequest) -> ExecResult:
        return await asyncio.to_thread(self.run, request)

    def close(self) -> None:
        """Release workers/containers. Idempotent."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def screen_request(request: ExecRequest) -> str | None:
    """Why a request is refused before running, or None."""
    if request.limits.network:
        return "network access is not supported by any sandbox backend (Limits.network must be False)"
    if any(p == NONCE_FILENAME for p in request.files):
        return f"{NONCE_FILENAME} is reserved"
    return None


def safe_relpath(path: str) -> bool:
    parts = path.split("/")
    return bool(path) and "\0" not in path and not path.startswith("/") and all(p not in ("", ".", "..") for p in parts)


def extract_evidence(stdout: str, nonce: str) -> tuple[str, list[dict]]:
    """Cut ``<nonce> <json>`` records out of stdout; returns (remaining stdout, parsed records)."""
    records: list[dict] = []
    pattern = re.compile(r"\n?" + re.escape(nonce) + r" ([^\n]*)\n?")

    def take(match: re.Match) -> str:
        try:
            value = json.loads(match.group(1))
        except ValueError:
            value = {"_malformed": match.group(1)[:200]}
        records.append(value if isinstance(value, dict) else {"value": value})
        return ""

    return pattern.sub(take, stdout), records


EVIDENCE_CLIENT = r"""
def _rlvr_make_reporter():
    import os as _os
    try:
        from _json import encode_basestring_ascii as _esc
    except ImportError:
        from json.encoder import py_encode_basestring_ascii as _esc
    _path = _os.environ.pop("RLVR_NONCE_FILE", None)
    if _path is None:
        raise RuntimeError("no evidence channel: run with ExecRequest(evidence=True)")
    with open(_path) as _f:
        _nonce = _f.read().strip()
    _os.unlink(_path)
    _fd, _write, _encode, _type, _repr, _items = _os.dup(1), _os.write, str.encode, type, repr, dict.items
    _str, _int, _float, _dict, _list, _tuple = str, int, float, dict, list, tuple
    _int_repr, _float_repr = int.__repr__, float.__repr__

    def enc(value):
        # everything used here was bound above: code that rebinds json/os/builtins later cannot touch it
        kind = _type(value)
        if value is None or value is True or value is False:
            return "null" if value is None else ("true" if value else "false")
        if kind is _str:
            return _esc(value)
        if kind is _int:
            return _int_repr(value)
        if kind is _float:
            return _float_repr(value) if value == value and value - value == 0.0 else "null"
        if kind is _dict:
            return "{" + ",".join(_esc(k if _type(k) is _str else _repr(k)) + ":" + enc(v) for k, v in _items(value)) + "}"
        if kind is _list or kind is _tuple:
            return "[" + ",".join([enc(v) for v in value]) + "]"
        return _esc(_repr(value))

    def report(record):
        _write(_fd, _encode("\n" + _nonce + " " + enc(record) + "\n"))
    return report
_rlvr_report = _rlvr_make_reporter()
del _rlvr_make_reporter
"""
"""Harness prelude (Python source) defining ``_rlvr_report(record: dict)``; see the module docstring.

The reporter binds every function it uses when the prelude runs (before untrusted code), so a candidate that
later rebinds ``json.dumps``, ``os.write`` or builtins cannot rewrite the records it writes.
"""
