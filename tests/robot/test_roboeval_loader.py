"""The eval-only loader, on a tiny fake checkout written here in our own words (no RoboEval content)."""

import pytest

import rlvr_gym
from rlvr_gym.envs.robot.roboeval import ENV_VAR, RoboEvalTasks
from rlvr_gym.types import EnvUnavailable

FAKE_RTL = """
class TraceElement:
    def __init__(self, kind, first, second=None):
        self.kind, self.first, self.second = kind, first, second


class Trace:
    def __init__(self, elements):
        self.elements = elements

    def has(self, kind, word):
        return any(e.kind == kind and word in e.first for e in self.elements)
"""
FAKE_SIMULATOR = """
class State:
    def __init__(self):
        self.locations, self.objects, self.agents, self.robot_location = [], {}, {}, ""

    def room(self, name):
        self.locations.append(name)
        return self

    def person(self, name, where, answers):
        self.agents.setdefault(where, []).append((name, answers))
        return self

    def at(self, where):
        self.robot_location = where
        return self
"""
FAKE_TASK = """
from benchmark.simulator import State

name = "GreetTheGardener"
prompts = ["Go to the greenhouse and greet whoever is there.", "Say hello in the greenhouse."]


def greeted(trace):
    return trace.has("GoTo", "greenhouse") and trace.has("Say", "hello")


tests = [
    {"state": State().room("hall").room("greenhouse").person("Mo", "greenhouse", ["yes"]).at("hall"),
     "test": greeted, "timeout": False},
    {"state": State().room("greenhouse").room("hall").at("hall"), "test": greeted, "timeout": True},
]
"""


@pytest.fixture
def checkout(tmp_path):
    (tmp_path / "benchmark" / "tasks").mkdir(parents=True)
    (tmp_path / "benchmark" / "rtl.py").write_text(FAKE_RTL)
    (tmp_path / "benchmark" / "simulator.py").write_text(FAKE_SIMULATOR)
    (tmp_path / "benchmark" / "tasks" / "GreetTheGardener.py").write_text(FAKE_TASK)
    return tmp_path


def test_refuses_without_a_checkout_or_for_training(monkeypatch, tmp_path, checkout):
    monkeypatch.delenv(ENV_VAR, raising=False)
    with pytest.raises(EnvUnavailable, match="training data"):
        RoboEvalTasks()
    with pytest.raises(EnvUnavailable):
        RoboEvalTasks(tmp_path / "nothing")
    with pytest.raises(ValueError, match="training data"):
        RoboEvalTasks(checkout, split="train")
    assert rlvr_gym.env_info("rlvr/RoboEval-v0").description.startswith("EVALUATION ONLY")


def test_runs_the_checkouts_own_checks_on_replayed_traces(checkout):
    env = rlvr_gym.make("rlvr/RoboEval-v0", roboeval_path=str(checkout), robustness_runs=0)
    assert env.num_tasks == 2
    env.reset(options={"task_index": 1})
    task = env.task
    assert task.metadata["eval_only"] and task.id == "roboeval/eval/1" and "Say hello" in task.prompt
    good = '```python\ndef task_program():\n    go_to("greenhouse")\n    say("Hello there")\n```'
    verdict = env.verify(task, [good])
    assert verdict.passed, verdict.feedback
    silent = '```python\ndef task_program():\n    go_to("greenhouse")\n```'
    assert not env.verify(task, [silent]).passed
    waits = (
        '```python\ndef task_program():\n    go_to("greenhouse")\n    say("hello")\n    while True:\n        pass\n```'
    )
    result = env.verify(task, [waits])  # state 2 allows a timeout, state 1 does not
    assert not result.passed and result.components["functional"] == 0.5


def test_answers_run_as_the_original_rewrites_them(checkout):
    env = rlvr_gym.make("rlvr/RoboEval-v0", roboeval_path=str(checkout), robustness_runs=0)
    task = env.get_task(0)
    body = '\n    go_to("GreenHouse")\n    say("HELLO")\n'  # a completion body; its literals are lower-cased
    assert env.verify(task, [body]).passed


def test_the_checkouts_trace_holds_the_originals_events():
    from rlvr_gym.envs.robot.roboeval import events_of
    from rlvr_gym.envs.robot.simulator import Robot, RobotError, WorldState

    robot = Robot(WorldState(rooms=["hall", "lab"], start="hall", people={"lab": {".*": ["yes"]}}))
    for name, *args in [("go_to", "roof"), ("pick", "pen"), ("go_to", "lab"), ("ask", "Mo", "Ready?", ["yes"]),
                        ("print",), ("say", "hi")]:  # fmt: skip
        try:
            getattr(robot, name)(*args)
        except RobotError:
            pass
    assert events_of(robot.trace) == [("GoTo", "roof", None), ("GoTo", "lab", None), ("Ask", "Ready?", ["yes"])]


def test_a_second_agent_with_the_same_name_is_unreachable():
    # ask takes the first agent whose name matches, so a later one with the same name never answers.
    from types import SimpleNamespace

    from rlvr_gym.envs.robot.roboeval import world_of

    agents = {"hall": [(".*", ["yes"]), (".*", ["no"]), ("Mo", [])]}
    state = SimpleNamespace(locations=["hall"], objects={}, agents=agents, robot_location="hall")
    assert world_of(state).people == {"hall": {".*": ["yes"], "Mo": []}}
