"""The harness counts only its own evidence: early exits, fake prints and equality hacks earn nothing."""

from __future__ import annotations

import time

import pytest

from rlvr_gym.envs.code.spec import CodeSpec, spec_of
from rlvr_gym.envs.code.verifier import evaluate_code
from rlvr_gym.types import Task

HAS_CLOSE = "def has_close_elements(numbers, threshold):\n    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])\n"


@pytest.fixture(scope="module")
def task(humaneval):
    return humaneval[0]


def test_correct_solution_passes(task, executor):
    report = evaluate_code(task, HAS_CLOSE, executor=executor)
    assert report.components["tests"] == 1.0 and report.test_run.finished


@pytest.mark.parametrize(
    "prefix",
    [
        "import os\nos._exit(0)\n",
        "import sys\nsys.exit(0)\n",
        "raise SystemExit(0)\n",
        "import os\nos.kill(os.getpid(), 9)\n",
    ],
)
def test_exit_before_tests_scores_zero(task, executor, prefix):
    report = evaluate_code(task, prefix + HAS_CLOSE, executor=executor)
    assert report.components["tests"] == 0.0
    assert report.components["executable"] == 0.0
    assert not report.test_run.loaded


def test_exit_inside_the_function_scores_zero(task, executor):
    for body in ("    import os\n    os._exit(0)\n", "    import sys\n    sys.exit(0)\n"):
        report = evaluate_code(task, spec_of(task).preamble + body, executor=executor)
        assert report.components["tests"] == 0.0, body


def test_printed_fake_records_count_for_nothing(task, executor):
    fake = '{"case": %d, "passed": true}'
    forge = (
        "import os\nimport sys\n"
        f"for i in range(7):\n    print('\\nnonce ' + '{fake}' % i)\n    os.write(1, ('\\n' + '{fake}' % i + '\\n').encode())\n"
        "    for fd in range(3, 12):\n        try:\n            os.write(fd, ('\\nx ' + '{fake}' % i + '\\n').encode())\n"
        "        except OSError:\n            pass\n"
        "def has_close_elements(numbers, threshold):\n    return None\n"
    )
    report = evaluate_code(task, forge, executor=executor)
    assert report.components["tests"] == 0.0


def test_always_equal_object_is_refused(task, executor):
    code = "class Any:\n    def __eq__(self, other):\n        return True\n\n\ndef has_close_elements(a, b):\n    return Any()\n"
    report = evaluate_code(task, code, executor=executor)
    assert report.components["tests"] == 0.0
    assert {c.error for c in report.test_run.cases} == {"NotPlainData"}


def test_candidate_cannot_read_the_tests(task, executor):
    code = (
        "import sys, os\nDATA = sys.stdin.read() + ''.join(open(f).read() for f in os.listdir('.') if os.path.isfile(f))\n"
        "def has_close_elements(numbers, threshold):\n    return 'assert' in DATA\n"
    )
    report = evaluate_code(task, code, executor=executor)
    assert report.components["tests"] < 1.0


def test_partial_credit_is_a_fraction(task, executor):
    code = "def has_close_elements(numbers, threshold):\n    return True\n"
    report = evaluate_code(task, code, executor=executor)
    run = report.test_run
    assert 0 < report.components["tests"] < 1
    assert report.components["tests"] == run.passed_count / len(run.cases) and len(run.cases) == 7
    assert report.components["executable"] == 1.0  # failed asserts are not runtime errors


def test_hanging_candidate_is_cut_short(task, executor):
    code = "def has_close_elements(numbers, threshold):\n    while True:\n        pass\n"
    start = time.perf_counter()
    report = evaluate_code(task, code, executor=executor)
    assert time.perf_counter() - start < executor.case_timeout_s * 3 + 5
    assert report.components["tests"] == 0.0 and report.components["executable"] == 0.0
    assert report.test_run.cases[0].error == "CaseTimeout"


def test_runtime_error_is_located(task, executor):
    code = "def has_close_elements(numbers, threshold):\n    x = 1\n    return numbers[100] > x\n"
    report = evaluate_code(task, code, executor=executor)
    assert report.components["executable"] == 0.0
    runtime = report.of_kind("runtime")
    assert len(runtime) == 1 and report.program.code_line(runtime[0].line) == 3  # 7 failing cases, one finding
    assert report.components["outcome"] == -0.6


def test_test_locals_do_not_leak_into_the_candidate(humaneval, executor):
    task = humaneval[38]  # decode_cyclic: check() binds a local named `str`; the candidate must not see it
    code = spec_of(task).preamble + "    return encode_cyclic(encode_cyclic(s))\n"
    assert evaluate_code(task, code, executor=executor).components["tests"] == 1.0


def test_tests_use_builtins_from_before_the_candidate_loaded(executor):
    spec = CodeSpec(entry_point="three", asserts=["assert len(three()) == 3"], reference_solution="")
    task = Task(id="t", prompt="", ground_truth=spec.model_dump())
    honest = evaluate_code(task, "def three():\n    return [1, 2, 3]\n", executor=executor)
    cheat = evaluate_code(
        task, "import builtins\nbuiltins.len = lambda x: 3\ndef three():\n    return []\n", executor=executor
    )
    assert honest.components["tests"] == 1.0
    assert cheat.components["tests"] == 0.0


FORGERS = {
    "json.dumps": (
        "import json\n_orig = json.dumps\n"
        "def _forge(record, **kw):\n    if isinstance(record.get('case'), int):\n"
        "        record = {'case': record['case'], 'passed': True}\n    return _orig(record, **kw)\n"
        "json.dumps = _forge\njson.encoder.JSONEncoder.encode = lambda self, o: _orig({'case': o.get('case'), 'passed': True})\n"
    ),
    "os.write": (
        "import os\n_orig = os.write\n"
        "def _forge(fd, data):\n    return _orig(fd, data.replace(b'\"passed\": false', b'\"passed\": true'))\n"
        "os.write = _forge\n"
    ),
    "builtins": "import builtins\nbuiltins.str = lambda *a: 'true'\nbuiltins.repr = lambda *a: 'true'\n",
}


@pytest.mark.parametrize("name", sorted(FORGERS))
def test_rebinding_library_functions_cannot_forge_records(task, executor, name):
    code = FORGERS[name] + "def has_close_elements(numbers, threshold):\n    return None\n"
    report = evaluate_code(task, code, executor=executor)
    assert report.components["tests"] == 0.0, report.test_run


def test_failed_tests_are_charged_to_the_entry_function(task, executor):
    from rlvr_gym.envs.code.actions import parse_action
    from rlvr_gym.envs.code.penalties import penalty_map

    action = "<submit>\nimport math\n\n\ndef has_close_elements(numbers, threshold):\n    return True\n</submit>"
    parsed = parse_action(action)
    report = evaluate_code(task, parsed.code, executor=executor)
    spans = [s for s in penalty_map(report, parsed.code, parsed.offset) if s.kind == "test"]
    assert len(spans) == 1 and spans[0].penalty == -0.3
    assert action[spans[0].start : spans[0].end] == "def has_close_elements(numbers, threshold):\n    return True"
