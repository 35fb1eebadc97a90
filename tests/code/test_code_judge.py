"""The trusted-side judge: plain-data codec, job output parsing, rounds, units mode, in-place calls, mutants."""

from __future__ import annotations

import collections
import enum
import json
import math
import random

import pytest

from rlvr_gym.envs.code.mutants import ALL_KINDS, CHECK_KINDS, mutants
from rlvr_gym.envs.code.spec import CodeSpec
from rlvr_gym.envs.code.testsuite import build_plan
from rlvr_gym.envs.code.verifier import evaluate_code
from rlvr_gym.sandboxes.python_programs.job_lines import read_lines
from rlvr_gym.sandboxes.python_programs.plain_values import MAX_DEPTH, PlainDataError, decode, encode
from rlvr_gym.types import Task


class Color(enum.IntEnum):
    RED = 3


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        False,
        0,
        -7,
        10**200,
        1.5,
        -0.0,
        math.inf,
        "héllo\x00\ud800",
        b"\x00\xff",
        1 + 2j,
        [1, [2, (3, 4)]],
        [int, str, type(None)],
        (),
        (1,),
        {1, 2},
        frozenset({"a"}),
        {(1, 2): [3], "k": {None: 1.0}},
        {"t": 1},
    ],
)
def test_plain_data_round_trips_exactly(value):
    back = decode(encode(value))
    assert back == value and type(back) is type(value)


def test_nan_and_iterators_decode_to_their_kind():
    assert math.isnan(decode(encode(float("nan"))))
    assert list(decode(encode(x * x for x in range(4)))) == [0, 1, 4, 9]


def test_subclasses_become_their_builtin_base():
    point = collections.namedtuple("Point", "x y")(1, 2)
    assert type(decode(encode(point))) is tuple and decode(encode(point)) == (1, 2)
    assert type(decode(encode(collections.Counter("aab")))) is dict
    assert type(decode(encode(Color.RED))) is int and decode(encode(Color.RED)) == 3


REFUSED = {
    "object": object(),
    "builtin": len,
    "class": collections.OrderedDict,
    "nested_object": [1, object()],
    "endless": iter(int, 1),
    "huge_str": "x" * 3_000_000,
    "huge_int": 2 ** (2**16),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_non_data_and_oversized_values_are_refused(name):
    with pytest.raises(PlainDataError):
        decode(encode(REFUSED[name]))


def test_hash_collision_floods_are_refused_fast():
    import time

    colliding = ",".join(str(k * (2**61 - 1)) for k in range(1, 30_000))  # every one hashes to 0
    pairs = ",".join(f"[{k * (2**61 - 1)},0]" for k in range(1, 30_000))
    start = time.perf_counter()
    for text in (f'{{"s":[{colliding}]}}', f'{{"d":[{pairs}]}}', f"[{colliding}]"):
        with pytest.raises(PlainDataError):
            decode(text)
    assert time.perf_counter() - start < 1.0
    assert decode(encode(set(range(10_000)))) == set(range(10_000))


def test_colliding_keys_of_any_type_are_refused():
    from rlvr_gym.sandboxes.python_programs.plain_values import _hash_table_safe

    class Same:
        def __hash__(self) -> int:
            return 7

    with pytest.raises(PlainDataError):
        _hash_table_safe([Same() for _ in range(300)])
    assert len(_hash_table_safe(list(range(300)))) == 300


def test_nesting_limit():
    deep: list = []
    for _ in range(MAX_DEPTH + 5):
        deep = [deep]
    with pytest.raises(PlainDataError):
        encode(deep)
    with pytest.raises(PlainDataError):
        decode("[" * 100_000 + "]" * 100_000)


@pytest.mark.parametrize(
    "text", ['{"d": [[[1], 2]]}', '{"s": [[1]]}', '{"x": 1}', '{"t": 1}', '{"t": [], "s": []}', '{"b": "zz"}', "{", ""]
)
def test_decoder_is_strict(text):
    with pytest.raises(PlainDataError):
        decode(text)


def test_job_lines_are_parsed_strictly_and_first_wins():
    out = "\n".join(
        [
            "garbage",
            '{"load": true}',
            '{"i": 0, "value": 1}',
            '{"i": 0, "value": 2}',
            '{"i": 5, "value": 3}',
            '{"i": true, "value": 4}',
            "[" * 200_000,
            '["not", "a", "record"]',
            '{"i": 1, "raised": "ValueError"}',
            '{"done": true}',
        ]
    )
    lines = read_lines(out, 2)
    assert lines.load == {"load": True} and lines.done
    assert lines.calls == {0: {"i": 0, "value": 1}, 1: {"i": 1, "raised": "ValueError"}}


def _task(**spec) -> Task:
    return Task(id="judge/test/0", prompt="", ground_truth=CodeSpec(**spec).model_dump())


def test_calls_whose_arguments_depend_on_results_take_more_rounds(executor):
    task = _task(entry_point="double", asserts=["assert double(double(double(1))) == 8", "assert double(5) == 10"])
    run = evaluate_code(task, "def double(x):\n    return 2 * x\n", executor=executor).test_run
    assert run.fraction == 1.0 and run.jobs == 3 and run.calls == 4


def test_in_place_changes_reach_the_tests(executor):
    task = _task(
        entry_point="sort_in_place",
        asserts=["items = [3, 1, 2]\nassert sort_in_place(items) is None\nassert items == [1, 2, 3]"],
    )
    good = evaluate_code(task, "def sort_in_place(items):\n    items.sort()\n", executor=executor)
    lazy = evaluate_code(task, "def sort_in_place(items):\n    return None\n", executor=executor)
    assert good.components["tests"] == 1.0 and lazy.components["tests"] == 0.0


def test_candidate_exceptions_reach_the_tests_as_builtin_types(executor):
    task = _task(
        entry_point="parse",
        asserts=[
            "try:\n    parse('x')\n    failed = False\nexcept ValueError:\n    failed = True\nassert failed",
            "assert parse('12', base=10) == 12",
        ],
    )
    good = evaluate_code(task, "def parse(text, base=10):\n    return int(text, base)\n", executor=executor)
    wrong = evaluate_code(task, "def parse(text, base=10):\n    raise KeyError(text)\n", executor=executor)
    assert good.components["tests"] == 1.0
    assert wrong.components["tests"] == 0.0 and {c.error for c in wrong.test_run.cases} == {"KeyError"}


NODE_SETUP = "class Node:\n    def __init__(self, value, left=None, right=None):\n        self.value, self.left, self.right = value, left, right\nroot = Node(1, Node(2, Node(4)), Node(3))"
HEIGHT = "def height(node):\n    return 0 if node is None else 1 + max(height(node.left), height(node.right))\n"


def test_setup_objects_use_units_mode_and_expected_values_stay_outside(executor):
    task = _task(
        entry_point="height",
        test_setup=NODE_SETUP,
        asserts=["assert height(root) == 3", "assert height(root.right) + 40 == 41"],
        reference_solution=HEIGHT,
    )
    plan = build_plan(CodeSpec.model_validate(task.ground_truth))
    assert plan.mode == "units" and plan.units == ("height(root)", "height(root.right)") and plan.weak_cases == 0
    assert evaluate_code(task, HEIGHT, executor=executor).components["tests"] == 1.0
    assert evaluate_code(task, "def height(node):\n    return 3\n", executor=executor).components["tests"] == 0.5


def test_units_using_assert_locals_fall_back_to_weak_cases(executor):
    spec = CodeSpec(
        entry_point="height",
        test_setup=NODE_SETUP,
        asserts=["assert all(height(n) >= 1 for n in [root, root.left])", "assert height(root) == 3"],
    )
    plan = build_plan(spec)
    assert plan.mode == "units" and plan.weak_cases == 1
    assert plan.units == ("all((height(n) >= 1 for n in [root, root.left]))", "height(root)")
    task = Task(id="judge/test/1", prompt="", ground_truth=spec.model_dump())
    assert evaluate_code(task, HEIGHT, executor=executor).components["tests"] == 1.0


def test_units_get_only_the_setup_they_need():
    spec = CodeSpec(
        entry_point="height",
        test_setup=NODE_SETUP + "\nimport math\nexpected = 3\nunused = Node(9)",
        asserts=["assert height(root) == expected"],
        reference_solution=HEIGHT,
    )
    plan = build_plan(spec)
    assert "class Node" in plan.setup and "root = Node(1" in plan.setup and "import math" in plan.setup
    assert "expected" not in plan.setup and "unused" not in plan.setup


def test_mutants_are_deterministic_and_differ_from_the_reference():
    reference = "def clamp(x, low, high):\n    if x < low:\n        return low\n    return min(x, high) + 0 * 2\n"
    first = mutants("", reference, "clamp", random.Random(4), ALL_KINDS)
    assert first == mutants("", reference, "clamp", random.Random(4), ALL_KINDS)
    assert set(first) == set(ALL_KINDS) and len(set(first.values())) == len(ALL_KINDS)
    assert "return None" in first["return_constant"] or "return 0" in first["return_constant"] or first
    assert set(CHECK_KINDS) <= set(first)


def test_mutant_programs_fail_the_tests(executor):
    task = _task(
        entry_point="add",
        asserts=["assert add(2, 3) == 5", "assert add(-1, 1) == 0"],
        reference_solution="def add(a, b):\n    return a + b\n",
    )
    for kind, source in mutants("", "def add(a, b):\n    return a + b\n", "add", random.Random(0), ALL_KINDS).items():
        assert evaluate_code(task, source, executor=executor).components["tests"] < 1.0, kind


def test_job_input_json_is_what_the_sandbox_gets():
    from rlvr_gym.envs.code.harness import job_input
    from rlvr_gym.envs.code.program import assemble

    text = job_input(assemble("", "x = 1"), [{"fn": "f", "args": {"t": [1]}, "kwargs": {"d": []}}], "", 2.0, 1)
    assert json.loads(text)["calls"][0]["args"] == {"t": [1]}


def test_a_broken_test_setup_is_reported_as_the_tasks_error(executor):
    spec = CodeSpec(
        entry_point="height",
        test_setup=NODE_SETUP + "\nroot = root.missing_helper()",
        asserts=["assert height(root) == 3"],
        reference_solution=HEIGHT,
    )
    task = Task(id="judge/test/2", prompt="", ground_truth=spec.model_dump())
    run = evaluate_code(task, HEIGHT, executor=executor).test_run
    assert run.loaded
    assert any("test setup in the sandbox: AttributeError" in e for e in run.setup_errors)


def test_setup_built_from_the_candidates_classes_runs_after_it(executor):
    """MBPP's tree tasks: the setup builds `root` from the `Node` class the solution defines."""
    node = (
        "class Node:\n    def __init__(self, value):\n        self.value, self.left, self.right = value, None, None\n"
    )
    spec = CodeSpec(
        entry_point="height",
        test_setup="root = Node(1)\nroot.left = Node(2)\nroot.left.left = Node(3)\nexpected = 3\nother = Node(9)",
        asserts=["assert height(root) == expected"],
        reference_solution=node + HEIGHT,
    )
    plan = build_plan(spec)
    assert plan.mode == "units" and plan.setup_after
    assert "root.left.left = Node(3)" in plan.setup and "expected" not in plan.setup and "other" not in plan.setup
    task = Task(id="judge/test/3", prompt="", ground_truth=spec.model_dump())
    assert evaluate_code(task, node + HEIGHT, executor=executor).components["tests"] == 1.0
    assert evaluate_code(task, node + "def height(node):\n    return 2\n", executor=executor).components["tests"] == 0.0


def test_builtin_types_are_arguments_like_any_data(executor):
    spec = CodeSpec(
        entry_point="drop_type",
        asserts=["assert drop_type((4, 5, 7.7, 'a'), int) == [7.7, 'a']", "assert drop_type((1, 'b'), str) == [1]"],
    )
    code = "def drop_type(items, kind):\n    return [x for x in items if not isinstance(x, kind)]\n"
    task = Task(id="judge/test/4", prompt="", ground_truth=spec.model_dump())
    assert build_plan(spec).mode == "values"
    assert evaluate_code(task, code, executor=executor).components["tests"] == 1.0
