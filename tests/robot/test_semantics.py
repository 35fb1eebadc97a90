"""One test per RoboEval semantic point of issue #34, each from the spec's facts (ENVS-NEXT.md §2.1-2.4): a case the
code before #34 got wrong, now as the original decides it. Checks and simulator run in-process (trusted code);
`test_roboeval_forms.py` runs programs through the sandbox."""

from __future__ import annotations

import pytest

from rlvr_gym.envs.robot import temporal as T
from rlvr_gym.envs.robot.checkspec import holds
from rlvr_gym.envs.robot.replay import replay
from rlvr_gym.envs.robot.simulator import Robot, RobotError, RobotTypeError, WorldState, events

PRINTERS = WorldState(
    rooms=["start", "printer room 1", "printer room 2", "supply room", "meeting room"],
    start="start",
    objects={"supply room": ["stapler", "stapler"]},
    people={"meeting room": {"Ana": ["tea", "no"]}},
)
SAY = {"call": "say"}


def _robot(*calls: tuple) -> Robot:
    """A robot over PRINTERS after `calls` (name, *args); robot errors are caught, as a program may."""
    robot = Robot(PRINTERS)
    for name, *args in calls:
        try:
            getattr(robot, name)(*args)
        except RobotError:
            pass
    return robot


# ---- windows ------------------------------------------------------------------------------------------------------
def test_a_window_whose_anchor_never_occurs_is_the_whole_trace():
    # §2.4: "if the matcher is not found they return the whole trace unchanged". Before: the check was False.
    trace = _robot(("go_to", "printer room 1"), ("say", "hello")).trace
    for op in ("after_first", "before_first", "after_last", "before_last"):
        assert holds([op, {"call": "pick"}, SAY], trace), op
    assert not holds(["after_first", {"call": "go_to"}, {"call": "pick"}], trace)


def test_precedes_is_after_first_then_exists():
    # Precedes(m1, m2) = AfterFirst(m1).Exists(m2). Before: "the first m2 comes after the first m1, and m1 exists".
    b_a_b = _robot(("say", "b"), ("say", "a"), ("say", "b")).trace
    assert T.precedes(T.call("say", "a"), T.call("say", "b"))(b_a_b)  # a b after the a is enough
    only_b = _robot(("say", "b"),).trace  # fmt: skip
    assert T.precedes(T.call("say", "a"), T.call("say", "b"))(only_b)  # no a: the whole trace
    assert not T.precedes(T.call("say", "b"), T.call("say", "a"))(_robot(("say", "a"), ("say", "b")).trace)


def test_nested_windows():
    # A check over a slice of a slice: after the first ask and before the first go_to the meeting room.
    spec = ["after_first", {"call": "ask"}, ["before_first", {"call": "go_to", "to": "meeting room"}, ["exists", SAY]]]
    ask_then_say = _robot(("go_to", "meeting room"), ("ask", "Ana", "q", ["yes", "no"]), ("say", "hi"))
    assert holds(spec, ask_then_say.trace)
    say_after_leaving = _robot(("go_to", "meeting room"), ("ask", "Ana", "q", ["yes", "no"]), ("go_to", "start"),
                               ("go_to", "meeting room"), ("say", "hi"))  # fmt: skip
    assert not holds(spec, say_after_leaving.trace)  # the flat window (after the ask) would hold


# ---- ActAtFirst ---------------------------------------------------------------------------------------------------
def test_act_at_first_visit_matches_the_location_by_pattern():
    # ActAtFirst("printer room", m): the visit starts at a go_to matching the pattern and lasts until a go_to whose
    # destination lacks "printer room" as a whole word. Before: rooms were compared for equality.
    robot = _robot(("go_to", "printer room 1"), ("go_to", "printer room 2"), ("is_in_room", "stapler"))
    assert holds(["at_first_visit", "printer room", {"call": "is_in_room"}], robot.trace)
    left = _robot(("go_to", "printer room 1"), ("go_to", "supply room"), ("is_in_room", "stapler"))
    assert not holds(["at_first_visit", "printer room", {"call": "is_in_room"}], left.trace)


def test_a_failed_go_to_ends_the_first_visit():
    # A failed go_to is a trace event (GoTo is printed before the move), so it closes the window.
    robot = _robot(("go_to", "printer room 1"), ("go_to", "roof"), ("say", "hi"))
    assert robot.location == "printer room 1" and robot.trace[1].error
    assert not holds(["at_first_visit", "printer room 1", SAY], robot.trace)


# ---- Not over an empty or terminal trace ---------------------------------------------------------------------------
def test_not_over_an_empty_trace_is_unsatisfied():
    # Terminal on an empty trace raises; the exception goes through Not and the test counts as unsatisfied.
    # Before: terminal was False on an empty trace, so Not(terminal) was True.
    assert not holds(["not", ["terminal", SAY]], [])
    assert holds(["not", ["exists", SAY]], [])  # Exists on an empty trace is simply False
    check = T.negate(T.terminal(T.call("say")))
    assert check([]) is False  # called as a whole check: unsatisfied
    with pytest.raises(T.Undecided):
        check.raw([])  # inside a bigger check the exception goes on


def test_not_over_the_empty_tail_after_the_last_event():
    # AfterLast(m) where m is the last event leaves an empty trace: Terminal there raises, Not does not rescue it.
    trace = _robot(("go_to", "start"), ("say", "bye")).trace
    assert not holds(["after_last", SAY, ["not", ["terminal", {"call": "go_to"}]]], trace)
    assert holds(["after_last", SAY, ["not", ["exists", {"call": "go_to"}]]], trace)
    assert not holds(["any", ["terminal", {"call": "go_to"}], ["not", ["terminal", SAY]]], [])  # raise, not False


# ---- failed calls as trace events ----------------------------------------------------------------------------------
def test_failed_calls_are_events_as_in_the_original():
    # go_to and ask print their line before they can fail; pick/place only on success; type errors come first.
    robot = _robot(("go_to", "roof"), ("ask", "Bob", "q", ["yes"]), ("pick", "stapler"), ("say", 5))
    kinds = [(c.name, c.error is not None) for c in events(robot.trace)]
    assert kinds == [("go_to", True), ("ask", True)]
    assert T.exists(T.call("go_to", "roof"))(robot.trace)  # Exists(GoTo("roof")) holds on the failed attempt
    assert not holds(["exists", {"call": "go_to", "to": "roof"}], robot.trace)  # but the robot never got there


def test_a_caught_robot_error_does_not_end_the_run_in_replay():
    log = [{"name": "go_to", "args": ["roof"], "error": "x"}, {"name": "go_to", "args": ["supply room"]},
           {"name": "pick", "args": ["stapler"]}]  # fmt: skip
    result = replay(PRINTERS, log)
    assert result.reason is None and [c.name for c in events(result.trace)] == ["go_to", "go_to", "pick"]


def test_a_print_ends_the_trace():
    # The original's trace parser stops at the first stdout line that is not a trace line.
    robot = _robot(("go_to", "printer room 1"), ("print",), ("say", "hi"))
    assert holds(["exists", {"call": "go_to", "to": "printer room 1"}], robot.trace)
    assert not holds(["exists", SAY], robot.trace)


# ---- ask: empty options, fall-through answers -----------------------------------------------------------------------
def test_ask_with_empty_options_fails_after_taking_the_answer():
    # The answer is popped before options are matched, so an empty list fails and the queue still moves on.
    robot = Robot(PRINTERS)
    robot.go_to("meeting room")
    with pytest.raises(RobotError):
        robot.ask("Ana", "Tea?", [])
    assert robot.trace[-1].recorded  # an Ask event, failed
    assert robot.ask("Ana", "Tea?", ["yes", "no"]) == "no"  # "tea" was used up by the failed ask


def test_fall_through_answers():
    # No option matches the answer: "yes"-like option if the answer matches the question, else "no"-like.
    robot = Robot(PRINTERS)
    robot.go_to("meeting room")
    assert robot.ask("Ana", "Would you like tea?", ["Yes please", "No thanks"]) == "Yes please"
    assert robot.ask("Ana", "Coffee?", ["sure", "nope"]) == "nope"  # "no" (last answer, repeats) is in "nope"
    with pytest.raises(RobotError, match="no option fits"):
        robot.ask("Ana", "Coffee?", ["sure", "maybe"])


# ---- wrong argument types --------------------------------------------------------------------------------------------
def test_wrong_argument_types_are_type_errors_and_not_events():
    # Non-str arguments raise TypeError (a program's `except TypeError` catches them); options must be a list.
    robot = Robot(PRINTERS)
    for name, args in [("say", (5,)), ("go_to", (None,)), ("is_in_room", (["stapler"],)), ("pick", (1.5,)),
                       ("ask", ("Ana", "q", ("yes", "no"))), ("ask", ("Ana", "q", ["yes", 1]))]:  # fmt: skip
        with pytest.raises(TypeError):
            getattr(robot, name)(*args)
    assert all(isinstance(c.error, str) and not c.recorded for c in robot.trace)
    assert issubclass(RobotTypeError, RobotError)


def test_calls_built_by_hand_are_events_as_the_robots_are():
    from rlvr_gym.envs.robot.simulator import Call

    trace = [Call("go_to", ("roof",), "start", None, "no such room"), Call("get_all_rooms", (), "start", []),
             Call("pick", ("pen",), "start", None, "no pen"), Call("say", ("hi",), "start")]  # fmt: skip
    assert [c.name for c in events(trace)] == ["go_to", "say"]


def test_the_originals_matcher_kind_regex_and_options():
    # (kind, regex1, regex2): regex1 searched in value1 (Ask: the question), regex2 in any option; regex2 on an
    # event without options raises, and the whole check is unsatisfied.
    robot = _robot(("go_to", "meeting room"), ("ask", "Ana", "Is the TOUR on?", ["Yes", "No"]), ("say", "welcome"))
    assert T.exists(T.event("Ask", "tour", "^yes$"))(robot.trace)
    assert not T.exists(T.event("Ask", "Ana"))(robot.trace)  # the person is no value of the original's Ask
    assert T.exists(T.event("GoTo", "meeting"))(robot.trace)
    assert not T.exists(T.event("Say", "welcome", "x"))(robot.trace)
    with pytest.raises(T.Undecided):
        T.exists(T.event("Say", "welcome", "x")).raw(robot.trace)
