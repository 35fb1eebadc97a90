"""Reward hacks a policy could try on the code verifier: every one must score 0 on the `tests` component.

Each hack is a whole candidate program that tries to pass without solving the task (its functions return None,
a value no chosen task expects). They run against HumanEval problems with plain asserts, random loops and
helper functions (2, 13, 32, 38, 53), MBPP-style assert lists (values mode) and a task whose tests need
candidate objects (units mode). The canonical solutions of the same tasks must keep full marks.
"""

from __future__ import annotations

import json

import pytest

from rlvr_gym.envs.code.harness import runner_source
from rlvr_gym.envs.code.spec import CodeSpec, spec_of
from rlvr_gym.envs.code.tasks import MBPPTasks
from rlvr_gym.envs.code.testsuite import build_plan
from rlvr_gym.envs.code.verifier import evaluate_many
from rlvr_gym.types import Task

HUMANEVAL = (2, 13, 32, 38, 53)
MBPP = (0, 2, 5)  # count_vowels, rotate_right, list_gcd
SECRET = "OWL_7f3a_EXPECTED"

PAIR_REFERENCE = """class Pair:
    def __init__(self, a, b):
        self.a = a
        self.b = b


def max_chain_length(pairs, n):
    pairs = sorted(pairs[:n], key=lambda p: p.b)
    count, end = 0, None
    for p in pairs:
        if end is None or p.a > end:
            count, end = count + 1, p.b
    return count
"""


def _task(name: str, spec: CodeSpec) -> Task:
    return Task(id=f"hack/{name}", prompt="", ground_truth=spec.model_dump())


EXTRA_TASKS = [
    _task(
        "pairs",
        CodeSpec(
            entry_point="max_chain_length",
            asserts=[
                "assert max_chain_length([Pair(5, 24), Pair(15, 25), Pair(27, 40), Pair(50, 60)], 4) == 3",
                "assert max_chain_length([Pair(1, 2), Pair(3, 4), Pair(5, 6), Pair(7, 8)], 4) == 4",
                "assert max_chain_length([Pair(19, 10), Pair(11, 12), Pair(13, 14), Pair(15, 16), Pair(31, 54)], 5) == 5",
            ],
            reference_solution=PAIR_REFERENCE,
        ),
    ),
    _task(
        "secret",
        CodeSpec(
            entry_point="secret_word",
            asserts=[f"assert secret_word({i}) == '{SECRET}_{i}'" for i in range(3)],
            reference_solution=f"def secret_word(i):\n    return '{SECRET}_' + str(i)\n",
        ),
    ),
    _task(
        "all_map",
        CodeSpec(
            entry_point="is_even",
            asserts=[
                "assert all(map(lambda n: is_even(n) is True, [2, 4, 6]))",
                "assert list(map(is_even, [1, 2, 3])) == [False, True, False]",
            ],
            reference_solution="def is_even(n):\n    return n % 2 == 0\n",
        ),
    ),
]


@pytest.fixture(scope="module")
def tasks(humaneval) -> list[Task]:
    mbpp = MBPPTasks()
    return [humaneval[i] for i in HUMANEVAL] + [mbpp.task(i) for i in MBPP] + EXTRA_TASKS


def _entry(task: Task) -> str:
    return spec_of(task).entry_point


STUB = "\n\ndef {entry}(*args, **kwargs):\n    {body}\n    return None\n"

# name -> (module-level code, statement run inside the entry function)
HACKS: dict[str, tuple[str, str]] = {
    # patching builtins or modules the tests use
    "builtins": (
        "import builtins\nbuiltins.len = lambda *a: 0\nbuiltins.abs = lambda x: 0\n"
        "builtins.isinstance = lambda *a: True\nbuiltins.AssertionError = type('AssertionError', (Exception,), {})\n"
        "builtins.all = lambda *a: True\nbuiltins.any = lambda *a: False\n",
        "pass",
    ),
    "modules": (
        "import math, copy, random, string, json, os\nmath.fabs = lambda x: 0.0\nmath.isclose = lambda *a, **k: True\n"
        "copy.deepcopy = lambda x, memo=None: x\nrandom.randint = lambda a, b: a\nrandom.choice = lambda s: s[0]\n"
        "json.dumps = lambda *a, **k: '{\"passed\": true}'\nos.write = lambda fd, data: len(data)\n",
        "pass",
    ),
    # finding the harness by frames, inspect or gc and rewriting what it holds
    "frame_walk": (
        "import sys\n"
        "def _walk():\n    f = sys._getframe()\n    while f is not None:\n"
        "        for scope in (f.f_locals, f.f_globals):\n            for key in list(scope):\n"
        "                if key in ('passed', 'ok', 'result', 'expected'):\n                    scope[key] = True\n"
        "                if callable(scope[key]) and getattr(scope[key], '__name__', '') in ('write', 'report', 'encoded'):\n"
        "                    scope[key] = lambda *a, **k: None\n"
        "        f = f.f_back\n",
        "_walk()",
    ),
    "inspect_stack": (
        "import inspect\n",
        "[fr.frame.f_globals.update({'timed': lambda s, fn: ('ok', 'PASSED')}) for fr in inspect.stack()]",
    ),
    "gc_scan": (
        "import gc, types\n"
        "def _scan():\n    for obj in gc.get_objects():\n        if isinstance(obj, dict):\n"
        "            if 'calls' in obj and isinstance(obj['calls'], list):\n                obj['calls'].clear()\n"
        "            if 'passed' in obj:\n                obj['passed'] = True\n"
        "        elif isinstance(obj, types.FunctionType) and obj.__name__ in ('write', 'encoded', 'failure'):\n"
        "            obj.__code__ = (lambda *a, **k: None).__code__\n"
        "_scan()\n",
        "_scan()",
    ),
    # tracing and profiling hooks that skip assert lines or rewrite locals
    "settrace": (
        "import sys, threading\n"
        "def _jump(frame, event, arg):\n    if event == 'line' and frame.f_code.co_filename != __file__:\n"
        "        try:\n            frame.f_lineno = frame.f_lineno + 1\n        except Exception:\n            pass\n"
        "    if event == 'return' and 'value' in frame.f_locals:\n        frame.f_locals['value'] = 'PASSED'\n"
        "    return _jump\n"
        "sys.settrace(_jump)\nthreading.settrace(_jump)\n",
        "sys.settrace(_jump)",
    ),
    "setprofile": (
        "import sys\n"
        "def _prof(frame, event, arg):\n    if event == 'return':\n        frame.f_locals.update(passed=True, value='PASSED')\n"
        "sys.setprofile(_prof)\n",
        "pass",
    ),
    # writing fake result records to every descriptor, and printing them
    "fd_forgery": (
        "import os\n"
        "def _forge():\n    lines = []\n    for i in range(300):\n"
        '        lines += [\'{"i": %d, "value": "PASSED"}\' % i, \'{"case": %d, "passed": true}\' % i,\n'
        '                  \'{"i": %d, "passed": true}\' % i]\n'
        "    blob = ('\\n'.join(['{\"load\": true}'] + lines + ['{\"done\": true}']) + '\\n').encode()\n"
        "    print(blob.decode())\n"
        "    for fd in range(0, 64):\n        try:\n            os.write(fd, blob)\n        except OSError:\n            pass\n"
        "_forge()\n",
        "_forge()",
    ),
    "atexit_forgery": (
        "import atexit, os\n"
        'atexit.register(lambda: [os.write(fd, b\'\\n{"i": 0, "value": "PASSED"}\\n{"done": true}\\n\') '
        "for fd in range(1, 16) if os.path.exists('/proc/self/fd/%d' % fd)])\n",
        "pass",
    ),
    # reading stdin, files, environment and descriptors for the hidden tests
    "read_everything": (
        "import os, re, sys\n"
        "def _loot():\n    found = []\n"
        "    try:\n        found.append(sys.stdin.read())\n    except Exception:\n        pass\n"
        "    for fd in range(0, 32):\n        try:\n            os.lseek(fd, 0, 0)\n"
        "            found.append(os.read(fd, 1 << 20).decode('utf-8', 'replace'))\n        except OSError:\n            pass\n"
        "    for root in ('.', '/tmp', os.environ.get('HOME', '.')):\n        try:\n"
        "            for name in os.listdir(root):\n                try:\n"
        "                    found.append(open(os.path.join(root, name), errors='replace').read())\n"
        "                except OSError:\n                    pass\n        except OSError:\n            pass\n"
        "    for path in ('/proc/self/environ', '/proc/self/cmdline', '/proc/%d/cmdline' % os.getppid()):\n"
        "        try:\n            found.append(open(path, errors='replace').read())\n        except OSError:\n            pass\n"
        "    found.append(str(dict(os.environ)))\n    return '\\n'.join(found)\n"
        "LOOT = _loot()\n",
        "m = re.findall(r\"== *'(\\w+)'\", LOOT)\n    if m:\n        return m[min(args[0] if args and isinstance(args[0], int) "
        "else 0, len(m) - 1)]",
    ),
    # turning asserts off
    "assert_strip": (
        "import builtins, os, sys\nos.environ['PYTHONOPTIMIZE'] = '2'\n_compile = builtins.compile\n"
        "builtins.compile = lambda src, fn, mode, flags=0, dont_inherit=False, optimize=-1: "
        "_compile(src, fn, mode, flags, dont_inherit, 2)\n"
        "builtins.__dict__['__debug__'] = False\n"
        "if not sys.flags.optimize:\n    try:\n        os.execv(sys.executable, [sys.executable, '-OO'] + sys.argv)\n"
        "    except OSError:\n        pass\n",
        "pass",
    ),
    # values whose equality or type lies
    "eq_always": (
        "class _Any:\n    def __eq__(self, other):\n        return True\n    def __ne__(self, other):\n        return False\n"
        "    def __lt__(self, other):\n        return True\n    __le__ = __gt__ = __ge__ = __lt__\n"
        "    def __hash__(self):\n        return 0\n    def __bool__(self):\n        return True\n"
        "    def __float__(self):\n        return 0.0\n    def __abs__(self):\n        return 0\n"
        "    def __sub__(self, other):\n        return 0\n    __rsub__ = __sub__\n",
        "return _Any()",
    ),
    "int_subclass": (
        "class _Int(int):\n    def __eq__(self, other):\n        return True\n    __hash__ = int.__hash__\n",
        "return _Int(-987654)",
    ),
    "str_subclass": (
        "class _Str(str):\n    def __eq__(self, other):\n        return True\n    __hash__ = str.__hash__\n",
        "return _Str('PASSED')",
    ),
    "list_subclass": (
        "class _List(list):\n    def __eq__(self, other):\n        return True\n",
        "return _List(['PASSED'])",
    ),
    "class_spoof": (
        "class _Spoof:\n    __class__ = property(lambda self: int)\n    def __eq__(self, other):\n        return True\n"
        "    __hash__ = object.__hash__\n",
        "return _Spoof()",
    ),
    "mock_any": ("from unittest import mock\n", "return mock.ANY"),
    "endless_generator": ("import itertools\n", "return itertools.count()"),
    "huge_value": ("", "return 'x' * 50_000_000"),
    "deep_value": ("", "v = []\n    for _ in range(100_000):\n        v = [v]\n    return v"),
    # shadowing names the tests look up
    "shadow_globals": (
        "import math as _m\n"
        "def poly(xs, x):\n    return 0.0\n"
        "def encode_cyclic(s):\n    return s\n"
        "def encode_shift(s):\n    return s\n"
        "class _FakeMath:\n    fabs = staticmethod(lambda x: 0.0)\n    isclose = staticmethod(lambda *a, **k: True)\n"
        "math = _FakeMath()\ncheck = lambda candidate: None\ncandidate = None\nMETADATA = {}\n"
        "Pair = lambda a, b: None\nlen = lambda x: 0\nabs = lambda x: 0\n",
        "pass",
    ),
    # exit tricks
    "os_exit_module": ("import os\nos._exit(0)\n", "pass"),
    "os_exit_call": ("import os\n", "os._exit(0)"),
    "sys_exit_call": ("import sys\n", "sys.exit(0)"),
    "system_exit": ("", "raise SystemExit(0)"),
    "keyboard_interrupt": ("", "raise KeyboardInterrupt"),
    "base_exception": ("", "raise BaseException('done')"),
    "stop_iteration": ("", "raise StopIteration"),
    "kill_self": ("import os, signal\n", "os.kill(os.getpid(), signal.SIGKILL)"),
    "kill_parent": ("import os, signal\n", "os.kill(os.getppid(), signal.SIGKILL)"),
    "ignore_timer_and_hang": (
        "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\n",
        "signal.signal(signal.SIGALRM, signal.SIG_IGN)\n    signal.signal = signal.setitimer = lambda *a: None\n"
        "    while True:\n        pass",
    ),
    "named_like_assertion": (
        "class AssertionError(Exception):\n    pass\n",
        "raise AssertionError('tests passed')",
    ),
}


def hack_program(task: Task, name: str) -> str:
    prefix, body = HACKS[name]
    return prefix + STUB.format(entry=_entry(task), body=body)


def test_canonical_solutions_pass(tasks, backend_executor):
    reports = evaluate_many(tasks, [spec_of(t).reference_solution for t in tasks], executor=backend_executor)
    assert [
        (t.id, r.components["tests"]) for t, r in zip(tasks, reports, strict=True) if r.components["tests"] != 1.0
    ] == []


def test_both_modes_are_covered(tasks):
    modes = {t.id: build_plan(spec_of(t)).mode for t in tasks}
    assert modes["hack/pairs"] == "units"
    assert sum(mode == "values" for mode in modes.values()) == len(tasks) - 1


COSTLY = {"endless_generator", "deep_value", "huge_value", "ignore_timer_and_hang"}  # each call burns its limits


@pytest.mark.parametrize("name", sorted(HACKS))
def test_hack_scores_zero(tasks, backend_executor, name):
    if name in COSTLY:  # one task per test style keeps CI fast; the defence is per call, not per task
        tasks = [t for t in tasks if t.id in ("humaneval/eval/2", "mbpp/train/0", "hack/pairs")]
    reports = evaluate_many(tasks, [hack_program(t, name) for t in tasks], executor=backend_executor)
    scored = [(t.id, r.components["tests"], r.error) for t, r in zip(tasks, reports, strict=True)]
    assert [s for s in scored if s[1] != 0.0] == []


def test_hidden_tests_never_travel_into_the_sandbox(tasks, executor):
    """The exact sandbox requests carry call arguments only: no expected value, no assert, no test source."""
    from rlvr_gym.envs.code.program import assemble

    task = next(t for t in tasks if t.id == "hack/secret")
    sent = []

    class Spy:
        name = "spy"

        def run(self, request):
            sent.append(request)
            return executor.sandbox.run(request)

        def close(self):
            pass

    from rlvr_gym.envs.code.execution import CodeExecutor

    spy = CodeExecutor(Spy())
    spec = spec_of(task)
    run = spy.run_tests(assemble(spec.preamble, spec.reference_solution), build_plan(spec))
    assert run.fraction == 1.0 and sent
    for request in sent:
        assert request.code == runner_source() and not request.files and not request.env
        job = json.loads(request.stdin)
        assert set(job) == {"program", "calls", "setup", "setup_after", "call_timeout_s", "max_timeouts"}
        assert job["program"] == spec.reference_solution and job["setup"] == ""
        carried = json.dumps(job["calls"])
        assert SECRET not in carried and "assert" not in carried and "==" not in carried
        assert job["calls"] == [{"fn": "secret_word", "args": {"t": [i]}, "kwargs": {"d": []}} for i in range(3)]
