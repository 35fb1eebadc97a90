"""The test harness that runs *inside* the sandbox (stdlib only, Python 3.9+; never imported by the verifier).

`harness.py` sends this file's text followed by a `main()` call. The job (candidate program and instrumented
tests) arrives on stdin, so nothing about the tests is on disk where the candidate could read it. Order matters:
`make_reporter` speaks the sandbox's evidence protocol (`rlvr_gym.sandboxes.base`: nonce file named by an
environment variable, deleted at once; records `"\n<nonce> <json>\n"` on a private duplicate of fd 1) before
any untrusted code runs. It does not use the sandbox's `EVIDENCE_CLIENT` prelude, whose reporter looks up
`json.dumps` and `os.write` at call time: a candidate could rebind `json.dumps` and rewrite every failing record
as a pass with the genuine nonce. Here every function the reporter calls is bound before the candidate loads,
and records are encoded by hand with the C string escaper. Then stdout/stderr are pointed at /dev/null (a candidate's
output flood cannot hit the output limit and cut the records off), the candidate is loaded as module `solution`,
and every test case reports through `report` from a context manager that swallows all exceptions (SystemExit
included) and enforces a per-case timer. The final `done` record proves the harness ran to the end; a candidate
that calls `os._exit` simply leaves its remaining cases without records, which the verifier counts as failures.

Remaining weakness (stated honestly): the candidate runs in this process, so code that deliberately inspects the
interpreter (gc, frames, closures, /proc/self/mem) can find `report` or the nonce and forge records. The security
component flags the usual tools for that (gc, inspect, ctypes, sys._getframe), but it is a penalty, not a wall.
"""

import builtins
import json
import os
import signal
import sys
import time
import types

CANDIDATE_FILE = "solution.py"
_SCAN_BUDGET = 10000


class CaseTimeout(BaseException):
    """Raised by the per-case timer; a BaseException so plain `except Exception` in candidate code misses it."""


class CasesAborted(BaseException):
    """Raised on entering a case after too many timeouts: the rest of the test module is skipped."""


class EqualityOverride(Exception):
    """An `==`/`!=` operand whose equality the candidate defined itself."""


def _defined_by_candidate(fn):
    code = getattr(fn, "__code__", None)
    return code is not None and getattr(code, "co_filename", None) == CANDIDATE_FILE


def _children(value):
    if isinstance(value, dict):
        return list(dict.keys(value)) + list(dict.values(value))
    for base in (list, tuple, set, frozenset):
        if isinstance(value, base):
            return list(base.__iter__(value))
    return []


def _overrides_equality(value):
    stack, seen = [value], 0
    while stack and seen < _SCAN_BUDGET:
        item = stack.pop()
        seen += 1
        cls = type(item)
        if any(_defined_by_candidate(getattr(cls, name, None)) for name in ("__eq__", "__ne__")):
            return True
        stack.extend(_children(item))
    return False


def guarded_eq(left, right):
    if _overrides_equality(left) or _overrides_equality(right):
        raise EqualityOverride("operand with candidate-defined __eq__/__ne__")
    return left == right


def guarded_ne(left, right):
    if _overrides_equality(left) or _overrides_equality(right):
        raise EqualityOverride("operand with candidate-defined __eq__/__ne__")
    return left != right


def _candidate_line(tb):
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == CANDIDATE_FILE:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _safe_text(exc):
    try:
        return str(exc)[:300]
    except BaseException:
        return ""


def _on_timer(signum, frame):
    raise CaseTimeout("test case time limit exceeded")


def make_case(report, timeout_s, max_timeouts):
    """The `__rlvr_case__(label)` context manager: one record per wrapped statement.

    It never propagates the wrapped statement's exception. After `max_timeouts` timed-out statements, entering
    the next one raises `CasesAborted`, which unwinds to the outermost case: a candidate that hangs costs at most
    `max_timeouts * timeout_s` seconds, and the skipped cases, having no record, count as failed.
    """
    timeouts = [0]
    set_handler, set_timer, alarm, real_timer = signal.signal, signal.setitimer, signal.SIGALRM, signal.ITIMER_REAL
    clock = time.perf_counter

    class Case:
        def __init__(self, label):
            self.label = label
            self.timed = label != "call"

        def __enter__(self):
            if self.timed and timeouts[0] >= max_timeouts:
                raise CasesAborted("too many timed-out test cases")
            self.start = clock()
            if self.timed:
                set_handler(alarm, _on_timer)
                set_timer(real_timer, timeout_s)
            return self

        def __exit__(self, exc_type, exc, tb):
            if self.timed:
                set_timer(real_timer, 0)
            record = {"case": self.label, "passed": exc_type is None, "s": clock() - self.start}
            if exc_type is CaseTimeout:
                timeouts[0] += 1
            if exc_type is not None:
                record["error"] = str(getattr(exc_type, "__name__", "Exception"))[:80]
                record["message"] = _safe_text(exc)
                record["line"] = _candidate_line(tb)
            report(record)
            return True

    return Case


def make_reporter(nonce_env):
    """`report(record)` bound to objects captured now, before untrusted code can rebind module attributes."""
    try:
        from _json import encode_basestring_ascii
    except ImportError:  # no C accelerator: the pure-Python escaper, captured by reference all the same
        from json.encoder import py_encode_basestring_ascii as encode_basestring_ascii

    path = os.environ.pop(nonce_env)
    with open(path) as handle:
        nonce = handle.read().strip()
    os.unlink(path)
    fd = os.dup(1)

    def encode(value, _type=type, _esc=encode_basestring_ascii, _int=int.__repr__, _float=float.__repr__,
               _str=str.__str__, _object_repr=object.__repr__):
        kind = _type(value)
        if value is None:
            return "null"
        if kind is bool:
            return "true" if value else "false"
        if kind is int:
            return _int(value)
        if kind is float:
            return _float(value)
        return _esc(_str(value) if kind is str else _object_repr(value))

    def report(record, _write=os.write, _fd=fd, _head="\n" + nonce + " ", _join=", ".join, _items=dict.items,
               _esc=encode_basestring_ascii, _bytes=str.encode):
        body = _join([_esc(key) + ": " + encode(value) for key, value in _items(record)])
        _write(_fd, _bytes(_head + "{" + body + "}\n"))

    return report


def main():
    job = json.loads(sys.stdin.read())
    report = make_reporter(job["nonce_env"])
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    clean_builtins = dict(vars(builtins))
    case = make_case(report, float(job["case_timeout_s"]), int(job["max_timeouts"]))
    module = types.ModuleType("solution")
    module.__file__ = CANDIDATE_FILE
    sys.modules["solution"] = module
    with case("load"):
        code = compile(job["program"], CANDIDATE_FILE, "exec", dont_inherit=True, optimize=0)
        exec(code, module.__dict__)
    namespace = dict(module.__dict__)
    namespace.update(
        {
            "__name__": "__rlvr_tests__",
            "__builtins__": clean_builtins,
            "__rlvr_case__": case,
            "__rlvr_eq__": guarded_eq,
            "__rlvr_ne__": guarded_ne,
        }
    )
    tests = compile(job["tests"], "tests.py", "exec", dont_inherit=True, optimize=0)
    with case("call"):
        exec(tests, namespace)
    report({"done": True})
    os._exit(0)
