"""The job that runs *inside* the sandbox: the candidate's robot program over a batch of world states.

Sent as text after `simulator.py` and the jail (`rlvr_gym.sandboxes.jail`), never imported by the verifier. stdin
carries JSON: `program` (the candidate's source), `runs` (each `{"state": WorldState json, "random_seed": int |
null}`) and `run_timeout_s`. Nothing in it is secret: world states are what the robot may explore, the checks
never leave the parent.

The job seals itself (the jail: fixed hash seed, identity invisible, no cyclic GC) and runs each world state in a
fresh fork, the program in the jail's globals: pure builtins, the eight robot functions, and `time` (a virtual
clock), `math`, `random` (seeded with RANDOM_SEED) and `re` as facades. So a run is a function of the program and
the state alone. Per run it prints, on a duplicate of fd 1 taken before any candidate code runs,
`{"run": i, "log": [{name, args, result}...], "end": "ok"|"error"|"timeout"|"call_limit"}`, then `{"done": true}`
(or `{"refused": why}` when the process cannot be sealed). None of it is trusted: the parent replays the log on its
own simulator (`replay.py`).
"""

import json
import os
import sys
from types import SimpleNamespace

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

    from .simulator import MAX_TEXT, RobotError, WorldState, make_robot
except ImportError:
    pass

MAX_LOG_CALLS = 2000
API_NAMES = ("get_current_location", "get_all_rooms", "is_in_room", "go_to", "ask", "say", "pick", "place")
MODULES = ("time", "math", "random", "re")
RANDOM_SEED = 0  # the seed of the program's own `random` in every run
GRACE_S = 0.5  # a run that ignores its timer (a long C call) is killed this long after it


class CallLimit(BaseException):
    """The program made more robot calls than a log may hold."""


def plain(value):
    """A JSON-able copy of an argument or result (anything else becomes None, which the replay rejects alike).

    A tuple also becomes None: the robot refuses it where it wants a list (ask's options), and a list in the log
    would replay as a call that succeeds."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return "".join([value])[: MAX_TEXT + 1]
    if type(value) is list:
        return [plain(v) for v in value[:100]]
    return None


PARAMETERS = {  # the original's parameter names (and ours, as API_DOC shows them), so keyword calls work
    "get_current_location": (),
    "get_all_rooms": (),
    "is_in_room": (("entity", "thing", "obj", "object"),),
    "go_to": (("location",),),
    "ask": (("person",), ("question",), ("options",)),
    "say": (("message",),),
    "pick": (("obj", "object"),),
    "place": (("obj", "object"),),
}


def bind(name, args, kwargs):
    """The positional arguments of one call; a TypeError (before anything is logged) when they do not fit."""
    slots = PARAMETERS[name]
    if len(args) > len(slots):
        raise TypeError(f"{name}() takes {len(slots)} positional argument(s) but {len(args)} were given")
    values, left = list(args), dict(kwargs)
    for names in slots[len(args) :]:
        given = [n for n in names if n in left]
        if len(given) != 1:
            raise TypeError(f"{name}() missing or repeated argument {names[0]!r}")
        values.append(left.pop(given[0]))
    if left:
        raise TypeError(f"{name}() got an unexpected keyword argument {sorted(left)[0]!r}")
    return values


def api(robot, log):
    def wrap(name):
        method = getattr(robot, name)

        def call(*args, **kwargs):
            values = bind(name, args, kwargs)
            if len(log) >= MAX_LOG_CALLS:
                raise CallLimit()
            entry = {"name": name, "args": [plain(a) for a in values]}
            log.append(entry)
            try:
                result = method(*values)
            except RobotError as exc:  # the program may catch it and go on; the replay checks it fails there too
                entry["error"] = str(exc)
                raise
            entry["result"] = plain(result)
            return result

        call.__name__ = name
        return call

    def printed(*args, **kwargs):
        """A print ends the original's trace; what it prints goes nowhere (the arguments are not even read)."""
        if len(log) >= MAX_LOG_CALLS:
            raise CallLimit()
        log.append({"name": "print", "args": []})
        robot.print()

    functions = {name: wrap(name) for name in API_NAMES}
    # `robot`: the same functions as attributes, for programs in the original's rewritten form (`robot.go_to(...)`)
    return {**functions, "robot": SimpleNamespace(**functions), "print": printed}


def sleeps_count(namespace, limit_s):
    """Make the program's `time.sleep` count against the run's time limit: in the original a real sleep uses up
    its wall-clock timeout (which is why it rewrites `time.sleep(1)` to 0.01 s). The virtual clock never waits;
    a run whose sleeps add up to more than `limit_s` ends as a timeout."""
    table = namespace["__builtins__"]
    importer, made = table["__import__"], {}

    def importing(module, globals=None, locals=None, fromlist=(), level=0):
        facade = importer(module, globals, locals, fromlist, level)
        if module != "time":
            return facade
        if "time" not in made:
            slept = [0.0]

            def sleep(seconds):
                facade.sleep(seconds)
                slept[0] += max(float(seconds), 0.0)
                if slept[0] > limit_s:
                    raise Timeout()

            made["time"] = SimpleNamespace(**{**vars(facade), "sleep": sleep})
        return made["time"]

    table["__import__"] = importing
    return namespace


def run_one(code, run, limit_s):
    """One run in the jail (called in a fresh fork): the call log and how the run ended."""
    state = WorldState.from_json(run["state"])
    robot = make_robot(state, run.get("random_seed"))
    log = []
    # "__main__" as in the original's `python -c`: an `if __name__ == "__main__":` block runs
    namespace = sleeps_count(program_globals(MODULES, seed=RANDOM_SEED, name="__main__"), limit_s)
    namespace.update(api(robot, log))
    end, message, line = "ok", "", None
    try:
        exec(code, namespace)
        namespace["task_program"]()
    except Timeout:
        end = "timeout"
    except CallLimit:
        end = "call_limit"
    except BaseException as exc:  # SystemExit included: any other way out is a program error
        end, message, line = "error", (type(exc).__name__ + ": " + str(exc))[:300], program_line(exc)
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
    write = record_channel()

    try:
        seal()
    except JailError as exc:
        write({"refused": str(exc)[:300]})
        os._exit(0)
    timeout, failed = float(job["run_timeout_s"]), None
    try:
        code = compile_program(job["program"], "program.py")
    except BaseException as exc:  # the parent's policy check failed to catch it: every run is a program error
        code, failed = None, {"log": [], "end": "error", "message": (type(exc).__name__ + ": " + str(exc))[:300]}
    for index, run in enumerate(job["runs"]):
        record = failed if code is None else isolated(lambda run=run: run_one(code, run, timeout), timeout, GRACE_S)
        if record is not None:
            write({"run": index, **record})
    write({"done": True})
    os._exit(0)
