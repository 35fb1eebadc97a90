"""The job that runs *inside* the sandbox: the candidate's robot program over a batch of world states.

Sent as text right after `simulator.py` (never imported by the verifier). stdin carries JSON: `program` (the
candidate's source), `runs` (each `{"state": WorldState json, "random_seed": int | null}`) and `run_timeout_s`.
Nothing in it is secret: world states are what the robot may explore, the checks never leave the parent.

The program runs with a small allowlist of builtins, an import hook for time/math/random/re only (time.sleep is
capped) and the eight robot functions as globals. Per run it prints, on a duplicate of fd 1 taken before any
candidate code runs, `{"run": i, "log": [{name, args, result}...], "end": "ok"|"error"|"timeout"|"call_limit"}`,
then `{"done": true}`. None of it is trusted: the parent replays the log on its own simulator (`replay.py`).
"""

import builtins
import json
import os
import random
import signal
import sys
import time
import types

try:  # for readers and linters; in the sandbox these names come from simulator.py's text, sent just before this
    from .simulator import MAX_TEXT, RobotError, WorldState, make_robot
except ImportError:
    pass

MAX_LOG_CALLS = 2000
API_NAMES = ("get_current_location", "get_all_rooms", "is_in_room", "go_to", "ask", "say", "pick", "place")
SAFE_BUILTINS = (
    "abs", "all", "any", "bool", "chr", "dict", "divmod", "enumerate", "filter", "float", "frozenset", "int",
    "isinstance", "iter", "len", "list", "map", "max", "min", "next", "ord", "pow", "print", "range", "repr",
    "reversed", "round", "set", "slice", "sorted", "str", "sum", "tuple", "zip", "True", "False", "None",
    "Exception", "ValueError", "TypeError", "KeyError", "IndexError", "RuntimeError", "StopIteration",
    "ZeroDivisionError", "AttributeError", "NameError", "LookupError", "ArithmeticError",
)  # fmt: skip


class RunTimeout(BaseException):
    """The per-run timer fired (a BaseException: `except Exception` in the program does not stop it)."""


class CallLimit(BaseException):
    """The program made more robot calls than a log may hold."""


def _capped_sleep(seconds):
    time.sleep(min(max(float(seconds), 0.0), 0.01))


# The `time` a program imports: sleeping is capped at 10 ms, the clocks are real.
_TIME = types.SimpleNamespace(
    time=time.time, monotonic=time.monotonic, perf_counter=time.perf_counter, sleep=_capped_sleep
)


def _public(module):
    """A module's public names minus submodules (`re.enum.sys` would lead to every module of the harness)."""
    names = {n: getattr(module, n) for n in dir(module) if not n.startswith("_")}
    return types.SimpleNamespace(**{n: v for n, v in names.items() if not isinstance(v, types.ModuleType)})


MODULES = {
    "time": _TIME,
    "math": _public(__import__("math")),
    "random": _public(random),
    "re": _public(__import__("re")),
}


def _import(name, globals=None, locals=None, fromlist=(), level=0):
    if level != 0 or name not in MODULES:
        raise ImportError(f"only {sorted(MODULES)} may be imported")
    return MODULES[name]


def plain(value):
    """A JSON-able copy of an argument or result (anything else becomes None, which the replay rejects alike)."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return "".join([value])[: MAX_TEXT + 1]
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value[:100]]
    return None


def api(robot, log):
    def wrap(name):
        method = getattr(robot, name)

        def call(*args):
            if len(log) >= MAX_LOG_CALLS:
                raise CallLimit()
            entry = {"name": name, "args": [plain(a) for a in args]}
            log.append(entry)
            try:
                result = method(*args)
            except RobotError as exc:
                entry["error"] = str(exc)
                raise
            except TypeError as exc:  # wrong number of arguments: the program's own error
                entry["error"] = str(exc)
                raise
            entry["result"] = plain(result)
            return result

        call.__name__ = name
        return call

    return {name: wrap(name) for name in API_NAMES}


def _on_timer(signum, frame):
    raise RunTimeout()


def run_one(code, run, timeout_s):
    state = WorldState.from_json(run["state"])
    robot = make_robot(state, run.get("random_seed"))
    log = []
    allowed = {name: getattr(builtins, name) for name in SAFE_BUILTINS if hasattr(builtins, name)}
    allowed.update({"__import__": _import, "True": True, "False": False, "None": None})
    namespace = {"__builtins__": allowed, "__name__": "robot_program", **api(robot, log)}
    random.seed(0)
    end, message, line = "ok", "", None
    signal.setitimer(signal.ITIMER_REAL, timeout_s)
    try:
        exec(code, namespace)
        namespace["task_program"]()
    except RunTimeout:
        end = "timeout"
    except CallLimit:
        end = "call_limit"
    except BaseException as exc:  # SystemExit included: any other way out is a program error
        end, message, line = "error", (type(exc).__name__ + ": " + str(exc))[:300], program_line(exc)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return {"log": log, "end": end, "message": message, "line": line}


def program_line(exc):
    """The innermost line of the program in the exception's traceback (for token-level penalties)."""
    line, tb = None, exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "program.py":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def main():
    job = json.loads(sys.stdin.read())
    out = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    signal.signal(signal.SIGALRM, _on_timer)

    def write(record):
        data = (json.dumps(record, ensure_ascii=True, separators=(",", ":")) + "\n").encode()
        while data:
            data = data[os.write(out, data) :]

    code = compile(job["program"], "program.py", "exec", dont_inherit=True)
    for index, run in enumerate(job["runs"]):
        write({"run": index, **run_one(code, run, float(job["run_timeout_s"]))})
    write({"done": True})
    os._exit(0)
