"""The jail (`rlvr_gym.sandboxes.jail`): what a model's program can reach, and that sealed jobs are deterministic.

Programs run in real sandbox jobs (the jail patches the process it seals, so never this one); determinism is
checked across two separate sandbox instances, whose template processes have different address layouts.
"""

from __future__ import annotations

import builtins
import io
import json
import os
import random
import sys
import types

import pytest

from rlvr_gym.sandboxes import ExecRequest, Limits, create_sandbox, jail

MODULES = (*jail.FACADE_NAMES, "time", "random")
DRIVER = """
import json, os, sys

def main():
    job = json.loads(sys.stdin.read())
    out = os.dup(1)
    os.dup2(os.open(os.devnull, os.O_RDWR), 1)
    try:
        seal()
    except JailError as exc:
        os.write(out, json.dumps({"refused": str(exc)}).encode())
        os._exit(0)

    def one(source):
        try:
            namespace = program_globals(tuple(job["modules"]), extra_builtins=("type",), classes=True)
            exec(compile_program(source), namespace)
            return {"value": repr([namespace["f"]() for _ in range(job["calls"])])}
        except Timeout:
            return {"error": "Timeout"}
        except BaseException as exc:
            return {"error": type(exc).__name__}

    results = {name: isolated(lambda s=src: one(s), job["timeout_s"], 0.5) for name, src in job["programs"].items()}
    os.write(out, json.dumps(results).encode())
    os._exit(0)

main()
"""
# Programs whose value used to depend on the process: addresses, identity hashes (None, types, functions, bound
# methods, NaN), the clock and the random state.
PROCESS_DEPENDENT = {
    "function_repr": "def f():\n    return repr(lambda: 0)",
    "instance_repr": "def f():\n    class C:\n        pass\n    return repr(C()) + str(C())",
    "f_string_and_percent": "def f():\n    return f'{f}' + '%s' % (f,) + format(f)",
    "error_message": "def f():\n    try:\n        [].index(f)\n    except ValueError as e:\n        return str(e)",
    "set_with_none": "def f():\n    return list({None, *range(40)})",
    "set_of_types": "def f():\n    return [repr(t) for t in {int, str, float, list, dict, tuple, set, bytes}]",
    "set_of_functions": "def f():\n    return [g() for g in set([lambda i=i: i for i in range(300)])][:30]",
    "set_of_bound_methods": "def f():\n    xs = [[] for _ in range(50)]\n    return [m is xs[0].append for m in "
    "{x.append for x in xs}][:20]",
    "set_of_nans": "def f():\n    return repr(list({float('nan'), 1.5, float('nan'), 2.5, *[float(i) for i in range(9)]}))",
    "clock": "import time\ndef f():\n    time.sleep(3)\n    return (time.time(), time.monotonic(), time.perf_counter_ns())",
    "random": "import random\ndef f():\n    return [random.random(), random.randint(0, 10**9)]",
    "module_state": "seen = []\ndef f():\n    seen.append(1)\n    return len(seen)",
}
ESCAPES = {  # each must fail (an error name), the same way everywhere
    "import os": "import os\ndef f():\n    return os.urandom(4)",
    "import sys": "import sys\ndef f():\n    return sys.modules",
    "from os": "from os import urandom\ndef f():\n    return urandom(4)",
    "typing.sys": "import typing\ndef f():\n    return typing.sys.modules['os'].urandom(4)",
    "collections._sys": "import collections\ndef f():\n    return collections._sys",
    "collections.abc": "import collections\ndef f():\n    return collections.abc",
    "re.sre_compile": "import re\ndef f():\n    return re.sre_compile",
    "SystemRandom": "import random\ndef f():\n    return random.SystemRandom().random()",
    "unseeded Random": "import random\ndef f():\n    return random.Random().random()",
    "seed from the OS": "import random\ndef f():\n    random.seed(None)\n    return random.random()",
    "time.localtime": "import time\ndef f():\n    return time.localtime()",
    "string.Formatter": "import string\ndef f():\n    return string.Formatter().get_field('0.x', [f], {})",
    "attrgetter": "import operator\ndef f():\n    return operator.attrgetter('x')(f)",
    "wraps": "import functools\ndef f():\n    return functools.update_wrapper",
    "get_type_hints": "import typing\ndef f():\n    return typing.get_type_hints(f)",
    "namedtuple": "import collections\ndef f():\n    return collections.namedtuple('P', 'x')",
    "open": "def f():\n    return open('/etc/hostname').read()",
    "eval": "def f():\n    return eval('1')",
    "getattr": "def f():\n    return getattr(f, 'x', 1)",
    "vars": "def f():\n    return vars()",
    "id": "def f():\n    return id(f)",
    "hash": "def f():\n    return hash(f)",
    "object": "def f():\n    return object()",
    "dunder attribute": "def f():\n    return f.__globals__",
    "dunder name": "def f():\n    return __builtins__",
    "generator frame": "def f():\n    return (x for x in []).gi_frame.f_globals",
    "format fields": "def f():\n    return '{0.x}'.format(f)",
    "mro": "def f():\n    return int.mro()",
    "bare except": "def f():\n    try:\n        return 1\n    except:\n        return 2",
}


def run_driver(box, programs: dict[str, str], *, calls: int = 1, hash_seed: int | None = 0, timeout_s: float = 1.0,
               ) -> dict:  # fmt: skip
    job = {"programs": programs, "modules": list(MODULES), "calls": calls, "timeout_s": timeout_s}
    request = ExecRequest(code=jail.source() + DRIVER, stdin=json.dumps(job), hash_seed=hash_seed,
                          limits=Limits(wall_s=60, cpu_s=60))  # fmt: skip
    result = box.run(request)
    assert result.stdout, result.stderr[-2000:]
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def second_local():
    box = create_sandbox("local")
    yield box
    box.close()


def test_process_dependent_programs_compute_the_same_in_every_sandbox(sandbox, second_local):
    first = run_driver(sandbox, PROCESS_DEPENDENT)
    assert first == run_driver(second_local, PROCESS_DEPENDENT) == run_driver(sandbox, PROCESS_DEPENDENT)
    assert all("value" in r for r in first.values()), first
    assert first["function_repr"]["value"] == repr(["<function f.<locals>.<lambda>>"])
    assert first["error_message"]["value"] == repr(["<function f> is not in list"])
    clock, rng = jail.virtual_clock(), jail.seeded_random(0)  # what the program's facades give, computed here
    clock.sleep(3)
    assert first["clock"]["value"] == repr([(clock.time(), clock.monotonic(), clock.perf_counter_ns())])
    assert first["random"]["value"] == repr([[rng.random(), rng.randint(0, 10**9)]])


def test_each_call_starts_from_the_program_text_alone(sandbox):
    # Two calls in one fork see each other's state; two isolated runs never do.
    assert run_driver(sandbox, {"s": PROCESS_DEPENDENT["module_state"]}, calls=2)["s"]["value"] == "[1, 2]"
    both = run_driver(sandbox, {"a": PROCESS_DEPENDENT["module_state"], "b": PROCESS_DEPENDENT["module_state"]})
    assert both["a"] == both["b"] == {"value": "[1]"}


def test_every_escape_fails_and_the_same_way_everywhere(sandbox, second_local):
    first = run_driver(sandbox, ESCAPES)
    assert first == run_driver(second_local, ESCAPES)
    reached = {name: r for name, r in first.items() if r is None or "error" not in r}
    assert not reached, reached


def test_time_limits_end_the_call_not_the_job(sandbox):
    slow = {"python_loop": "def f():\n    while True:\n        pass", "c_loop": "def f():\n    return sum(range(10**12))",
            "after": "def f():\n    return 1"}  # fmt: skip
    results = run_driver(sandbox, slow, timeout_s=0.3)
    assert results["python_loop"] == {"error": "Timeout"}
    assert results["c_loop"] is None  # killed after its grace: no answer, like a crash
    assert results["after"] == {"value": "[1]"}


def test_a_job_without_a_fixed_hash_seed_refuses(sandbox):
    assert "hash seed" in run_driver(sandbox, {"x": "def f():\n    return 1"}, hash_seed=None)["refused"]


def _reachable(roots: dict[str, object], depth: int = 3) -> dict[str, object]:
    """Everything reachable from `roots` through public attribute names (no calls), up to `depth` steps."""
    seen: dict[int, str] = {}
    found: dict[str, object] = {}
    frontier = list(roots.items())
    for _ in range(depth):
        following = []
        for path, value in frontier:
            if id(value) in seen:
                continue
            seen[id(value)] = path
            found[path] = value
            for name in dir(value):
                if name.startswith("_"):
                    continue
                try:
                    following.append((f"{path}.{name}", getattr(value, name)))
                except Exception:
                    continue
        frontier = following
    found.update(frontier)
    return found


def test_the_surface_leads_to_no_module_file_or_interpreter_function():
    namespace = jail.program_globals(MODULES, extra_builtins=("type",), classes=True)
    allowed = namespace["__builtins__"]
    roots = {name: value for name, value in allowed.items() if name != "__import__"}
    roots.update({name: allowed["__import__"](name) for name in MODULES})
    forbidden = {id(v) for v in (builtins.open, builtins.eval, builtins.exec, builtins.compile, builtins.getattr,
                                 builtins.setattr, builtins.vars, builtins.globals, builtins.locals, builtins.id,
                                 builtins.hash, builtins.input, builtins.__import__, builtins.breakpoint,
                                 random.SystemRandom, random.Random, random.seed, os.urandom, sys.exit)}  # fmt: skip
    bad = {}
    for path, value in _reachable(roots).items():
        if isinstance(value, (types.ModuleType, io.IOBase)) or id(value) in forbidden:
            bad[path] = value
        elif getattr(value, "__module__", None) in ("os", "posix", "sys", "io", "_io", "subprocess", "ctypes"):
            bad[path] = value
    assert not bad, sorted(bad)[:20]


def test_source_rules_name_every_breach():
    import ast

    problems = jail.source_problems(ast.parse("x = y.__class__\nz = __builtins__\nq = g.gi_frame\nw = '{}'.format(1)"))
    assert len(problems) == 4 and all(p.startswith("line ") for p in problems)
    assert jail.source_problems(ast.parse("if __name__ == 'x':\n    y = [i for i in range(3)]")) == []
