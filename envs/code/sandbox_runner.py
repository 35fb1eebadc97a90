"""The job that runs *inside* the sandbox: load the candidate, make the requested calls, print their values.

Sent as text after the shared plain-value codec (`rlvr_gym.sandboxes.python_programs.plain_values`; never
imported by the verifier). The job arrives on stdin as JSON:
`program` (the candidate module), `calls` (each `{"fn": name, "args": tree, "kwargs": tree}` or, for tests that
need objects only the sandbox can build, `{"expr": source}`), `setup` (test setup code for `expr` calls, run
before the candidate loads, or after it when `setup_after` says it uses the candidate's classes),
`call_timeout_s` and `max_timeouts`. Nothing in it is a secret: it carries call
arguments, never expected values or assert logic, so the candidate may read all of it.

Output, one JSON object per line on a duplicate of fd 1 taken before the candidate loads (the candidate's own
stdout/stderr go to /dev/null): `{"load": ...}`, then per call `{"i": k, "value": tree}` (plus `"args_after"`
when the call changed its arguments in place) or
`{"i": k, "raised": name, "message": ..., "line": n}` or `{"i": k, "bad": why}` or `{"i": k, "timeout": true}`,
then `{"done": true}`. None of it is trusted: the verifier reads these lines as the values the candidate claims
its calls returned, which is exactly what a program that returned them would claim. A forged or garbled line can
therefore never be worth more than an honest program's output, and no nonce or authentication is needed.
"""

import builtins
import json
import os
import signal
import sys
import types

try:  # for readers and linters; in the sandbox these names come from plain_values.py's text, sent before this
    from rlvr_gym.sandboxes.python_programs.plain_values import decode_tree, encode
except ImportError:
    pass

CANDIDATE_FILE = "solution.py"


class CallTimeout(BaseException):
    """Raised by the per-call timer (a BaseException, so `except Exception` in candidate code misses it)."""


def _on_timer(signum, frame):
    raise CallTimeout("call time limit exceeded")


def _candidate_line(tb):
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == CANDIDATE_FILE:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _text(exc):
    try:
        return str(exc)[:300]
    except BaseException:
        return ""


def make_writer(fd):
    def write(record):
        data = (json.dumps(record, ensure_ascii=True, allow_nan=True, separators=(",", ":")) + "\n").encode()
        while data:
            data = data[os.write(fd, data) :]

    return write


def timed(seconds, fn):
    """(outcome, value): outcome is "ok", "timeout" or the exception; the timer is always disarmed."""
    signal.signal(signal.SIGALRM, _on_timer)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return "ok", fn()
    except CallTimeout:
        return "timeout", None
    except BaseException as exc:  # SystemExit and KeyboardInterrupt are just failed calls here
        return exc, None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def failure(exc):
    return {"raised": type(exc).__name__[:80], "message": _text(exc), "line": _candidate_line(exc.__traceback__)}


def call_of(spec, module, namespace):
    """A zero-argument function making one requested call, and one telling how it changed its arguments."""
    if "expr" in spec:
        code = spec["compiled"]
        return (lambda: eval(code, namespace)), (lambda: {})
    args, kwargs = decode_tree(spec["args"]), decode_tree(spec["kwargs"])
    before = encode(args)
    name = spec["fn"]

    def changes():
        after = encode(args)
        return {} if after == before else {"args_after": json.loads(after)}

    return (lambda: vars(module)[name](*args, **kwargs)), changes


def run_setup(setup, tests, write):
    try:
        exec(setup, tests)
    except Exception as exc:  # the task's own code failed
        write({"setup_error": type(exc).__name__ + ": " + _text(exc)})


def run_calls(job, write):
    timeout_s, max_timeouts = float(job["call_timeout_s"]), int(job["max_timeouts"])
    tests = {"__name__": "__rlvr_tests__", "__builtins__": dict(vars(builtins))}
    for spec in job["calls"]:
        if "expr" in spec:
            spec["compiled"] = compile(spec["expr"], "<test>", "eval", dont_inherit=True)
    setup = compile(job.get("setup") or "", "<test setup>", "exec", dont_inherit=True)
    if not job.get("setup_after"):
        run_setup(setup, tests, write)
    module = types.ModuleType("solution")
    module.__file__ = CANDIDATE_FILE
    sys.modules["solution"] = module
    program = compile(job["program"], CANDIDATE_FILE, "exec", dont_inherit=True, optimize=0)
    outcome, _ = timed(2 * timeout_s, lambda: exec(program, module.__dict__))
    if outcome != "ok":
        write({"load": False, **(failure(outcome) if outcome != "timeout" else {"raised": "CallTimeout"})})
        return
    write({"load": True})
    if job.get("setup_after"):  # the setup builds objects from the candidate's own classes
        tests = {**module.__dict__, **tests}
        run_setup(setup, tests, write)
    namespace = {**module.__dict__, **tests}
    timeouts = 0
    for index, spec in enumerate(job["calls"]):
        if timeouts >= max_timeouts:
            break
        call, changes = call_of(spec, module, namespace)
        outcome, value = timed(timeout_s, call)
        if outcome == "timeout":
            timeouts += 1
            write({"i": index, "timeout": True})
        elif outcome != "ok":
            write({"i": index, **failure(outcome)})
        else:
            record = encoded(value, timeout_s)
            mutated = timed(timeout_s, changes)  # a function may work in place: the tests see the new arguments
            write({"i": index, **record, **(mutated[1] if mutated[0] == "ok" else {})})


def encoded(value, timeout_s):
    """The record body for a returned value: its plain-data tree, or why it has none."""
    outcome, tree = timed(timeout_s, lambda: encode(value))
    if outcome == "ok":
        return {"value": json.loads(tree)}
    return {"bad": "encoding the value timed out" if outcome == "timeout" else _text(outcome)}


def main():
    job = json.loads(sys.stdin.read())
    write = make_writer(os.dup(1))
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    run_calls(job, write)
    write({"done": True})
    os._exit(0)
