import pytest

from rlvr_gym.envs.robot import temporal as T
from rlvr_gym.envs.robot.simulator import Robot, RobotError, WorldState


def world() -> WorldState:
    return WorldState(
        rooms=["start loc", "kitchen", "office", "lab"],
        start="start loc",
        objects={"kitchen": ["apple"], "lab": []},
        people={"office": {"Alice": ["yes", "no"]}},
    )


def run_fetch(robot: Robot) -> None:
    robot.go_to("kitchen")
    robot.pick("apple")
    robot.go_to("office")
    robot.ask("Alice", "Want it?", ["yes", "no"])
    robot.place("apple")
    robot.go_to("start loc")
    robot.say("done")


def test_simulator_semantics_and_errors():
    r = Robot(world())
    assert r.get_current_location() == "start loc"
    r.go_to("the kitchen please")  # the state's name is the regex, searched in the argument
    assert r.location == "kitchen" and r.is_in_room("apple")
    r.pick("apple")
    with pytest.raises(RobotError):
        r.pick("apple")
    with pytest.raises(RobotError):
        r.go_to("garage")
    r.go_to("office")
    assert r.ask("Alice", "q", ["yes", "no"]) == "yes"
    assert r.ask("Alice", "q", ["yes", "no"]) == "no"
    assert r.trace[-1].result == "no" and r.trace[4].error is not None


def test_temporal_operators_on_traces():
    good = Robot(world())
    run_fetch(good)
    t = good.trace
    assert T.exists(T.call("place", "apple", at="office"))(t)
    assert not T.exists(T.call("place", "apple", at="kitchen"))(t)
    assert T.terminal(T.call("say"))(t)
    assert not T.terminal(T.visits("start loc"))(t)
    assert T.after_first(T.call("pick", "apple"), T.visits("office"))(t)
    assert T.before_first(T.call("pick"), T.visits("kitchen"))(t)
    assert not T.before_first(T.call("pick"), T.visits("office"))(t)
    assert T.after_last(T.call("ask"), T.call("say"))(t)
    assert T.before_last(T.call("say"), T.call("ask"))(t)
    assert T.precedes(T.call("pick"), T.call("place"))(t)
    assert not T.precedes(T.call("place"), T.call("pick"))(t)
    assert T.act_at_first_visit("office", T.call("ask", "Alice"))(t)
    assert not T.act_at_first_visit("kitchen", T.call("say"))(t)
    combo = T.all_of(T.precedes(T.call("pick"), T.call("place")), T.negate(T.exists(T.call("pick", "banana"))))
    assert combo(t) and not T.any_of(T.exists(T.call("pick", "banana")))(t)


def test_skipped_step_fails_check():
    r = Robot(world())
    r.go_to("office")
    r.say("hi")
    assert not T.exists(T.call("place", "apple", at="office"))(r.trace)
    assert not T.precedes(T.call("pick"), T.call("place"))(r.trace)
