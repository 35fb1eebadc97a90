"""The job that runs *inside* the sandbox: one AZR program called on a batch of argument lists.

Sent as text after the shared plain-value codec (`rlvr_gym.sandboxes.python_programs.plain_values`) and the
jail (`rlvr_gym.sandboxes.jail`), never imported by the verifier. stdin carries JSON: `program` (the module
text), `calls` (argument lists as plain-data trees) and `call_timeout_s`. Nothing in it is secret.

The job seals itself (fixed hash seed, identity invisible, no cyclic GC) and runs every call in a fresh fork: the
program loads in the jail's globals (pure builtins and `type`, class statements, facades of `MODULES`, nothing
that leads to sys, os, io or a file descriptor) and `f(*args)` is called once. A value therefore depends on the
program and its arguments alone: not on the clock, entropy, addresses, or what an earlier call left behind.

Output, one JSON line each on a duplicate of fd 1 taken before any program code runs (read by
`rlvr_gym.sandboxes.python_programs.job_lines.read_lines`): `{"load": true}` or `{"load": false, "raised":
...}`, then per call `{"i": k, "value": tree}`, `{"i": k, "raised": name, "message": ...}`, `{"i": k, "timeout":
true}` or `{"i": k, "bad": why}` (after a timeout no further call runs), then `{"done": true}`; `{"refused": why}` when the process cannot be
sealed. None of it is trusted: values are decoded into fresh builtin objects by the verifier.
"""

import json
import os
import sys

try:  # for readers and linters; in the sandbox these names come from the texts sent just before this one
    from rlvr_gym.sandboxes.jail import (
        JailError,
        Timeout,
        compile_program,
        isolated,
        program_globals,
        record_channel,
        seal,
    )
    from rlvr_gym.sandboxes.python_programs.plain_values import decode_tree, encode
except ImportError:
    pass

ENTRY = "f"
MODULES = ("math", "itertools", "collections", "functools", "heapq", "bisect", "string", "re", "operator", "typing")
GRACE_S = 0.5  # a call that ignores its timer (a long C call) is killed this long after it


def _text(exc):
    try:
        return str(exc)[:300]
    except BaseException:
        return ""


def loaded(code):
    """A fresh module of the program in the jail (raises what loading raised)."""
    namespace = program_globals(MODULES, extra_builtins=("type",), classes=True, name="solution")
    exec(code, namespace)
    return namespace


def load_record(code):
    try:
        loaded(code)
    except Timeout:
        return {"load": False, "raised": "CallTimeout"}
    except BaseException as exc:
        return {"load": False, "raised": type(exc).__name__[:80], "message": _text(exc)}
    return {"load": True}


def call_record(code, args_tree):
    """`f(*args)` on a fresh module, as a record body (value as plain data, or why there is none)."""
    try:
        value = loaded(code)[ENTRY](*decode_tree(args_tree))
    except Timeout:
        return {"timeout": True}
    except BaseException as exc:
        return {"raised": type(exc).__name__[:80], "message": _text(exc)}
    try:
        return {"value": json.loads(encode(value))}
    except Timeout:
        return {"bad": "encoding the value timed out"}
    except BaseException as exc:
        return {"bad": _text(exc)}


def main():
    job = json.loads(sys.stdin.read())
    write = record_channel(allow_nan=True)

    try:
        seal()
    except JailError as exc:
        write({"refused": _text(exc)})
        os._exit(0)
    timeout = float(job["call_timeout_s"])
    try:
        code = compile_program(job["program"], "solution.py")
    except BaseException as exc:
        write({"load": False, "raised": type(exc).__name__[:80], "message": _text(exc)})
        code = None
    load = None if code is None else isolated(lambda: load_record(code), 2 * timeout, GRACE_S)
    if load is not None:
        write(load if load.get("load") is True else {**load, "load": False})
    if load is not None and load.get("load") is True:
        for index, args in enumerate(job["calls"]):
            record = isolated(lambda args=args: call_record(code, args), timeout, GRACE_S) or {"timeout": True}
            write({"i": index, **record})
            if record.get("timeout"):
                break
    write({"done": True})
    os._exit(0)
