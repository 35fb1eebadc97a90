"""The verifier end to end through the real sandbox: references pass, mutants and attacks fail, logs are replayed."""

import pytest

from rlvr_gym.envs.robot import verifier
from rlvr_gym.envs.robot.execution import RobotExecutor, outcome_of
from rlvr_gym.envs.robot.program import extract, parse, violations
from rlvr_gym.envs.robot.simulator import WorldState
from rlvr_gym.envs.robot.tasks import RobotTasks

pytest.importorskip("rlvr_gym.sandboxes")


@pytest.fixture(scope="module")
def executor():
    ex = RobotExecutor()
    try:
        assert ex.sandbox is not None
    except Exception as exc:  # no sandbox backend on this machine
        pytest.skip(f"sandbox unavailable: {exc}")
    return ex


def fenced(body: str) -> str:
    return f"```python\n{body}```"


def task_of(kind: str, index: int = 0):
    return RobotTasks(kinds=[kind]).task(index)


def test_every_kind_reference_passes_in_the_sandbox(executor):
    for kind in ("action_location", "conditional", "exhaustive_search", "search_deliver"):
        task = task_of(kind)
        verdict = verifier.verify(task, task.reference_actions, executor=executor)
        assert verdict.passed and verdict.reward == 1.0, (kind, verdict.feedback)
        assert verdict.components["executable"] == 1.0 and verdict.components["syntax"] == 1.0
        assert verdict.components["style"] == 1.0 and verdict.components["security"] == 1.0


def test_mutants_fail_with_partial_credit(executor):
    task = task_of("conditional")
    code = extract(task.reference_actions[0]).code
    options = code.split("question, ", 1)[1].split(")", 1)[0]  # the literal option list of the ask
    always_first = code.replace("    go_to(", f"    choice = {options}[0]\n    go_to(", 2).replace(
        f"    choice = {options}[0]\n    go_to(", "    go_to(", 1
    )  # asks, then brings the first option whatever the answer
    verdict = verifier.verify(task, [fenced(always_first)], executor=executor)
    c = verdict.components
    assert not verdict.passed and c["functional"] == 0.5 and 0.5 < c["temporal"] < 1.0 and c["penalty"] == -0.3
    # mixed by default: 0.8 functional + 0.2 temporal (most conditions of the failed state hold), + 0.1 penalty
    assert verdict.reward == pytest.approx(0.8 * 0.5 + 0.2 * c["temporal"] - 0.03)
    assert "state 2" in verdict.feedback


def test_runtime_failures_fail(executor):
    task = task_of("manipulation")
    quick = RobotExecutor(executor.sandbox, run_timeout_s=0.3)
    cases = {
        "loops": "def task_program():\n    while True:\n        pass\n",
        "raises": "def task_program():\n    go_to('nowhere at all')\n",
        "crashes": "def task_program():\n    x = 1 / 0\n",
        "no builtins": "def task_program():\n    getattr(go_to, 'x')\n",
        "imports": "import time\ndef task_program():\n    time.sleep(5)\n",
    }
    for name, body in cases.items():
        verdict = verifier.verify(task, [fenced(body)], executor=quick, robustness_runs=1)
        assert verdict.valid and not verdict.passed and -0.1 <= verdict.reward < 0.0, name  # only penalties


def test_policy_refuses_reaching_outside_the_api():
    attacks = [
        "import os\ndef task_program():\n    os.system('true')\n",
        "def task_program():\n    g = go_to.__globals__\n",
        "def task_program():\n    say('{0.__class__}'.format(go_to))\n",
        "def task_program():\n    try:\n        pass\n    except:\n        pass\n",
        "def task_program():\n    __builtins__\n",
        "def other():\n    pass\n",
        "def task_program():\n    def g():\n        yield me.gi_frame.f_back\n    me = g()\n    next(me).f_back\n",
    ]
    for code in attacks:
        assert violations(parse(code)), code
    assert not violations(parse("import time\ndef task_program():\n    for _ in range(2):\n        say('hi')\n"))


def test_forged_logs_are_replayed_not_believed():
    state = WorldState(rooms=["hall", "lab"], start="hall", people={"lab": {"Ana": ["no"]}})
    forged = {"log": [{"name": "go_to", "args": ["lab"], "result": None},
                      {"name": "ask", "args": ["Ana", "ok?", ["yes", "no"]], "result": "yes"}], "end": "ok"}  # fmt: skip
    assert outcome_of(state, None, forged).end == "inconsistent"
    honest = {"log": forged["log"][:1], "end": "ok"}
    outcome = outcome_of(state, None, honest)
    assert outcome.clean and outcome.trace[0].result == "lab"
    assert outcome_of(state, None, None).end == "killed"


def test_invalid_responses_and_weights(executor):
    task = task_of("action_location")
    prose = verifier.verify(task, ["I would go to the kitchen."])
    assert not prose.valid and prose.reward == -0.1  # the lowest penalty: no answer never beats a wrong one
    two = fenced("def task_program():\n    say('a')\n") + fenced("def task_program():\n    say('b')\n")
    assert not verifier.verify(task, [two]).valid
    assert not verifier.verify(task, [fenced("def task_program(:\n")]).valid
    assert extract("x" * 300_000).code is None
    idle = verifier.verify(task, [fenced("def task_program():\n    say('hello')\n")], executor=executor,
                           weights={"syntax": 1, "style": 1, "security": 1, "executable": 1})  # fmt: skip
    assert idle.reward == -0.06 and idle.components["syntax"] == 1.0  # bonuses only once a state passes
    assert idle.components["penalty"] == -0.6  # a failed check charges -0.3 per state to task_program
    full = verifier.verify(task, task.reference_actions, executor=executor, weights={"style": 1.0})
    assert full.reward == 1.0
    with pytest.raises(ValueError):
        verifier.verify(task, task.reference_actions, weights={"speed": 1.0})


def test_token_level_penalties_land_on_the_offending_lines(executor):
    from rlvr_gym.envs.robot.penalties import penalty_spans, token_penalties

    task = task_of("manipulation")
    response = "Here it is:\n" + fenced("def task_program():\n    say('hi')\n    go_to('the moon')\n")
    judgement = verifier.judge(task, [response], executor=executor)
    spans = penalty_spans(judgement)
    runtime = [s for s in spans if s.kind == "runtime"]
    assert runtime and all(response[s.start : s.end] == "    go_to('the moon')" for s in runtime)
    broken = "```python\nimport os\ndef task_program():\n    pass\n```"
    rule = penalty_spans(verifier.judge(task, [broken]))
    assert [broken[s.start : s.end] for s in rule] == ["import os"] and rule[0].penalty == -0.5
    offsets = [(0, 5), (runtime[0].start, runtime[0].start + 4)]
    assert token_penalties(runtime[:1], offsets) == [0.0, -0.6]
