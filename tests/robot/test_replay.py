from rlvr_gym.envs.robot import temporal as T
from rlvr_gym.envs.robot.replay import replay
from rlvr_gym.envs.robot.simulator import WorldState

STATE = WorldState(
    rooms=["start", "kitchen", "office"],
    start="start",
    objects={"kitchen": ["apple"]},
    people={"office": {"Bob": ["no"]}},
)


def test_consistent_log_replays():
    log = [
        {"name": "go_to", "args": ["kitchen"]},
        {"name": "pick", "args": ["apple"]},
        {"name": "go_to", "args": ["office"]},
        {"name": "ask", "args": ["Bob", "q", ["yes", "no"]], "result": "no"},
        {"name": "place", "args": ["apple"]},
    ]
    r = replay(STATE, log)
    assert r.reason is None and r.robot_error is None
    assert T.exists(T.call("place", "apple", at="office"))(r.trace)


def test_forged_answer_or_bad_log_is_rejected():
    forged = [
        {"name": "go_to", "args": ["office"]},
        {"name": "ask", "args": ["Bob", "q", ["yes", "no"]], "result": "yes"},
    ]
    assert "disagrees" in replay(STATE, forged).reason
    assert replay(STATE, [{"name": "teleport", "args": []}]).reason
    assert replay(STATE, [{"name": "pick", "args": [{"x": 1}]}]).reason
    assert replay(STATE, [{"name": "pick", "args": ["apple", "pear"]}]).reason
    assert "expected a str" in replay(STATE, [{"name": "pick", "args": [1]}]).robot_error
    assert replay(STATE, "junk\x00").reason


def test_a_caught_robot_error_is_replayed_and_the_run_goes_on():
    # The original lets a program catch a robot error and continue; the failed call stays in the trace.
    log = [{"name": "pick", "args": ["apple"], "error": "x"}, {"name": "go_to", "args": ["kitchen"]}]
    r = replay(STATE, log)
    assert r.reason is None and r.robot_error and len(r.trace) == 2 and r.trace[1].result == "kitchen"
    forged = [{"name": "pick", "args": ["apple"], "result": "apple"}]  # claims a pick that fails here
    assert "fails in the trusted replay" in replay(STATE, forged).reason
    feigned = [{"name": "go_to", "args": ["kitchen"], "error": "x"}]  # claims a failure that succeeds here
    assert "succeeds in the trusted replay" in replay(STATE, feigned).reason
