"""ReBel output format, cumulative belief, and the belief-consistency reward on hand-computed cases."""

from __future__ import annotations

import json

import pytest

from rlvr_gym.algorithms.rebel.rewards import (
    format_reward,
    gt_phase,
    intrinsic_reward,
    prediction_features,
    prediction_reward,
    state_reward,
)
from rlvr_gym.envs.alfworld.belief import Belief, format_output, merge_belief, parse_belief, parse_output

BELIEF = {
    "state": {
        "objects": {"Apple 1": "CounterTop 1 "},
        "states": {},
        "visited": ["countertop 1"],
        "unvisited_candidates": ["fridge 1", "countertop 1"],
    },
    "task": {"phase": "Find", "target": "apple 1", "subgoal": "find the apple"},
    "prediction": "If I execute go to fridge 1, I expect the fridge 1 is closed.",
}


def output(belief: dict, action: str = "go to fridge 1") -> str:
    return f"<belief>{json.dumps(belief)}</belief><think>Look in the fridge.</think><action>{action}</action>"


def test_parse_output_normalises_and_accepts_the_format():
    parsed = parse_output(output(BELIEF))
    assert parsed.format_ok and parsed.action == "go to fridge 1" and parsed.think == "Look in the fridge."
    b = parsed.belief
    assert b is not None
    assert b.objects == {"apple 1": "countertop 1"}  # lower-cased, stripped
    assert b.phase == "find" and b.target == "apple 1"
    assert b.unvisited == ["fridge 1", "countertop 1"]


def test_parse_belief_retries_single_quotes_and_fills_missing_keys():
    b = parse_belief("<BELIEF>{'task': {'phase': 'pickup'}}</BELIEF>")
    assert b == Belief(phase="pickup")
    assert parse_belief("<belief>not json</belief>") is None
    assert parse_belief("no tags") is None


@pytest.mark.parametrize(
    "text",
    [
        "<belief>{}</belief><action>look</action>",  # no think
        "<belief>{}</belief><think>t</think>",  # no action
        "<belief>{oops</belief><think>t</think><action>look</action>",  # bad JSON
        "<belief>{}</belief><think>我想</think><action>look</action>",  # CJK
    ],
)
def test_format_rejections(text):
    assert not parse_output(text).format_ok


def test_cumulative_merge():
    cum = Belief(
        objects={"apple 1": "countertop 1", "mug 1": "unknown"},
        visited=["countertop 1"],
        unvisited=["fridge 1", "cabinet 1"],
        phase="find",
        target="apple 1",
        subgoal="s",
    )
    new = Belief(
        objects={"apple 1": "in_hand"},
        visited=["fridge 1", "countertop 1"],
        unvisited=["drawer 1"],
        phase="",
        target="",
        subgoal="pick it",
        prediction="p",
    )
    merged = merge_belief(cum, new)
    assert merged.objects == {"apple 1": "in_hand", "mug 1": "unknown"}  # last write wins
    assert merged.visited == ["countertop 1", "fridge 1"]  # dedup append
    assert merged.unvisited == ["cabinet 1", "drawer 1"]  # union minus visited
    assert (merged.phase, merged.target, merged.subgoal) == ("find", "apple 1", "pick it")  # latest non-empty
    assert merge_belief(cum, None) == cum and merge_belief(cum, None) is not cum


def test_format_output_round_trips():
    b = Belief(objects={"apple 1": "in_hand"}, phase="place", target="apple 1", prediction="x")
    assert parse_output(format_output(b, "t", "move apple 1 to fridge 1")).belief == b


def test_format_reward_values():
    assert format_reward(True, True) == pytest.approx(0.01)
    assert format_reward(True, False) == pytest.approx(-0.01)
    assert format_reward(False, True) == pytest.approx(-0.05)
    assert format_reward(False, False) == pytest.approx(-0.05)


@pytest.mark.parametrize(
    ("commands", "holding", "won", "phase"),
    [
        (["go to sinkbasin 1", "clean mug 1 with sinkbasin 1", "move mug 1 to sinkbasin 1"], True, False, "transform"),
        (["go to shelf 1", "move mug 1 to shelf 1"], True, False, "place"),
        (["go to shelf 1", "move mug 1 to shelf 1"], False, False, "find"),
        (["take mug 1 from shelf 1", "go to shelf 2"], False, False, "pickup"),
        (["pick up mug 1"], False, False, "pickup"),
        (["go to shelf 1", "look"], False, False, "find"),
        (["heat mug 1 with microwave 1"], True, True, "done"),
    ],
)
def test_gt_phase(commands, holding, won, phase):
    assert gt_phase(commands, holding, won) == phase


def test_prediction_reward_hand_computed():
    pred = "If I execute go to fridge 1, I expect the fridge 1 is closed."
    # clause after "i expect": tokens > 3 chars not stopwords = fridge, closed; "closed" is a noise unigram
    assert prediction_features(pred) == ["fridge", "fridge closed"]
    obs = "You arrive at fridge 1. The fridge 1 is closed."
    assert prediction_reward(pred, obs) == pytest.approx(0.5)
    assert prediction_reward(pred, None) == 0.0
    assert prediction_reward("I expect nothing", obs) == 0.0  # no features


GT = {
    "objects": {"apple 1": "countertop 1", "mug 1": "countertop 1"},
    "inventory": ["mug 1"],
    "states": {},
    "visited": ["countertop 1", "fridge 1"],
    "receptacles": ["countertop 1", "fridge 1", "cabinet 1"],
}


def test_state_reward_hand_computed():
    belief = Belief(
        objects={"apple 1": "countertop 1", "mug 1": "in_hand", "egg 1": "fridge 1"},
        visited=["countertop 1", "drawer 1"],
        unvisited=["fridge 1", "cabinet 1"],
    )
    # objects: both GT facts agree, the unobserved egg is free -> 1.0; states: GT empty -> 0.7 (step >= 2);
    # visited: tp=1, F1 = 2/4 = 0.5, one false positive -> 0.4; unvisited: 1 of 2 was visited -> 0.5
    expected = 0.35 * 1.0 + 0.25 * 0.7 + 0.25 * 0.4 + 0.15 * 0.5
    assert state_reward(belief, GT, step=5) == pytest.approx(expected)
    wrong = Belief(objects={"apple 1": "fridge 1", "mug 1": "countertop 1"}, visited=["countertop 1", "fridge 1"])
    # both objects contradicted (mug is in hand) -> 0; visited exact -> 1; unvisited empty -> 1
    assert state_reward(wrong, GT, step=5) == pytest.approx(0.25 * 0.7 + 0.25 + 0.15)
    # early steps score uninformed components leniently (0.5) instead of 0.7
    assert state_reward(wrong, GT, step=0) == pytest.approx(0.25 * 0.5 + 0.25 + 0.15)


def test_intrinsic_reward_combination():
    belief = Belief(
        objects={"apple 1": "countertop 1", "mug 1": "in_hand"},
        visited=["countertop 1", "fridge 1"],
        phase="place",
        prediction="If I execute go to fridge 1, I expect the fridge 1 is closed.",
    )
    r = intrinsic_reward(
        belief,
        format_ok=True,
        admissible=True,
        gt=GT,
        phase="place",
        next_observation="The fridge 1 is closed.",
        step=3,
    )
    r_state = 0.35 + 0.25 * 0.7 + 0.25 + 0.15
    assert r.state == pytest.approx(r_state) and r.task == 1.0 and r.prediction == pytest.approx(0.5)
    assert r.total == pytest.approx(0.4 * r_state + 0.3 * 1.0 + 0.2 * 0.5 + 0.1 * 0.01)
    bad = intrinsic_reward(None, format_ok=False, admissible=True, gt=GT, phase="find", next_observation="x", step=0)
    assert bad.total == pytest.approx(0.1 * -0.05)


@pytest.mark.parametrize(
    "raw",
    ['{"a":' * 100_000, "[" * 100_000, '{"state": "' + "x" * 40_000 + '"}', "{'state': {'objects': {'Apple 1': 1"],
)
def test_hostile_beliefs_are_no_belief(raw):
    """Deep nesting (a RecursionError in the JSON decoder), oversize and broken JSON: None, never an exception."""
    parsed = parse_output(f"<belief>{raw}</belief><think>t</think><action>look</action>")
    assert parsed.belief is None and not parsed.format_ok and parsed.action == "look"


def test_the_env_owns_the_belief_format():
    """The ALFWorld env speaks this protocol; algorithms read it from the env package, never the reverse."""
    import pathlib

    import rlvr_gym.envs.alfworld as alfworld

    for path in pathlib.Path(alfworld.__file__).parent.glob("*.py"):
        assert "algorithms" not in "".join(
            line for line in path.read_text().splitlines() if line.lstrip().startswith(("import ", "from "))
        ), path
