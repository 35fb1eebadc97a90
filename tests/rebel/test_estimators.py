"""The registered `rebel` and `gigpo` estimators on hand-made episodes (the env infos the ALFWorld env emits)."""

from __future__ import annotations

import numpy as np
import pytest

from rlvr_gym.algorithms.advantages import AdvantageInput, compute_advantages, get_estimator
from rlvr_gym.algorithms.rebel.advantage import rebel_advantage
from rlvr_gym.algorithms.rebel.estimators import belief_trace
from rlvr_gym.envs.alfworld.belief import Belief, format_output
from rlvr_gym.types import Episode, Message, Turn, Verdict

INTRO = "You are in the middle of a room. Looking quickly around you, you see a countertop 1, and a fridge 1."


def turn(
    i: int,
    action: str,
    *,
    anchor: str,
    obs_after: str,
    admissible: list[str],
    gt: dict,
    valid: bool = True,
    won: bool = False,
) -> Turn:
    info = {
        "anchor_obs": anchor,
        "observation_text": obs_after,
        "admissible_commands": admissible,
        "won": won,
        "belief_gt": gt,
    }
    if i == 0:
        info["belief_initial"] = {"objects": {}, "receptacles": ["countertop 1", "fridge 1"]}
    return Turn(
        index=i,
        observation=[Message(role="user", content=anchor)],
        action=action,
        reward=1.0 if won else 0.0,
        valid_action=valid,
        info=info,
        token_ids=[1] * (3 + i),
    )


def episode(eid: str, turns: list[Turn], won: bool) -> Episode:
    return Episode(
        episode_id=eid,
        env_id="rlvr/ALFWorld-v0",
        task_id="t",
        group_id="g",
        turns=turns,
        verdict=Verdict(reward=float(won), passed=won),
        task_metadata={"task_type": "pick_and_place"},
    )


ARRIVE = "You arrive at countertop 1. On the countertop 1, you see a apple 1."
GT1 = {"objects": {"apple 1": "countertop 1"}, "inventory": [], "states": {}, "visited": ["countertop 1"]}
GT2 = {"objects": {"apple 1": "in_hand"}, "inventory": ["apple 1"], "states": {}, "visited": ["countertop 1"]}


def good_episode() -> Episode:
    b1 = Belief(
        objects={"apple 1": "countertop 1"},
        visited=["countertop 1"],
        phase="pickup",
        target="apple 1",
        prediction="If I execute take apple 1 from countertop 1, I expect you pick up the apple 1.",
    )
    b2 = Belief(
        objects={"apple 1": "in_hand"},
        phase="place",
        target="apple 1",
        prediction="If I execute move apple 1 to fridge 1, I expect you move the apple 1 to the fridge 1.",
    )
    return episode(
        "good",
        [
            turn(
                0,
                format_output(b1, "go", "go to countertop 1"),
                anchor=INTRO,
                obs_after=ARRIVE,
                admissible=["take apple 1 from countertop 1", "go to fridge 1"],
                gt=GT1,
            ),
            turn(
                1,
                format_output(b2, "take", "take apple 1 from countertop 1"),
                anchor=ARRIVE,
                obs_after="You pick up the apple 1 from the countertop 1.",
                admissible=["go to fridge 1"],
                gt=GT2,
            ),
            turn(
                2,
                format_output(b2, "put", "move apple 1 to fridge 1"),
                anchor="You pick up the apple 1.",
                obs_after="You move the apple 1 to the fridge 1.",
                admissible=["go to countertop 1"],
                gt=GT2,
                won=True,
            ),
        ],
        won=True,
    )


def bad_episode() -> Episode:
    b1 = Belief(objects={"apple 1": "fridge 1"}, phase="pickup", target="apple 1", prediction="I expect a banana.")
    return episode(
        "bad",
        [
            turn(
                0,
                format_output(b1, "go", "go to countertop 1"),
                anchor=INTRO,
                obs_after=ARRIVE,
                admissible=["take apple 1 from countertop 1", "go to fridge 1"],
                gt=GT1,
            ),
            turn(
                1,
                "no format at all",
                anchor="Nothing happens.",
                obs_after="Nothing happens.",
                admissible=["take apple 1 from countertop 1"],
                gt=GT1,
                valid=False,
            ),
        ],
        won=False,
    )


def test_belief_trace_scores_good_above_bad():
    good, bad = belief_trace(good_episode()), belief_trace(bad_episode())
    assert good.rewards[0].task == 1.0  # GT phase after step 0 is pickup (take is admissible)
    assert good.rewards[0].total > bad.rewards[0].total  # bad belief contradicts the apple's observed location
    assert bad.rewards[1].total == pytest.approx(0.1 * -0.05)  # unparseable -> format term only
    assert bad.keys[1] == "null"
    assert good.keys[0] == bad.keys[0]  # same env phase, target, no inventory, no state change: one group


def test_rebel_estimator_matches_pure_math():
    eps = [good_episode(), bad_episode()]
    inp = AdvantageInput.from_episodes(eps)
    out = get_estimator("rebel")(inp, per_task_normalization=False)
    traces = [belief_trace(ep) for ep in eps]
    a_ep, turns = rebel_advantage(
        ["g", "g"], [10.0, 0.0], [t.intrinsic for t in traces], [t.keys for t in traces], task_keys=inp.task_keys
    )
    assert out.episode == pytest.approx(a_ep) and a_ep == pytest.approx([5.0, -5.0])
    for got, want in zip(out.turn, turns, strict=True):
        assert got == pytest.approx(want)
    assert out.turn[0][0] > out.episode[0]  # the shared first step is credited to the successful episode
    assert 0 < out.metrics["singleton_step_fraction"] < 1
    assert out.token_advantages(0, 1, 4) == pytest.approx(np.full(4, out.turn[0][1]))


def test_rebel_via_compute_advantages_with_task_normalisation():
    out = compute_advantages("rebel", AdvantageInput.from_episodes([good_episode(), bad_episode()]))
    assert len(out.turn) == 2 and all(np.isfinite(t).all() for t in out.turn)
    assert out.turn[0].mean() > out.turn[1].mean()


def test_gigpo_estimator_groups_by_anchor():
    eps = [good_episode(), bad_episode()]
    out = get_estimator("gigpo")(AdvantageInput.from_episodes(eps), gamma=0.95)
    # rows: 3 + 2, episode term: 1 - 3/5 and 0 - 3/5
    assert out.episode == pytest.approx([0.4, -0.6])
    # only the intro is shared: returns 0.95^2 vs 0 -> ±0.95^2/2; other steps singletons
    assert out.turn[0] == pytest.approx([0.4 + 0.95**2 / 2, 0.4, 0.4])
    assert out.turn[1] == pytest.approx([-0.6 - 0.95**2 / 2, -0.6])


def test_episode_free_inputs_fall_back_to_episode_terms():
    inp = AdvantageInput.from_rewards([[1.0, 0.0]])
    assert get_estimator("rebel")(inp).episode == pytest.approx([5.0, -5.0])
    assert get_estimator("gigpo")(inp).episode == pytest.approx([0.5, -0.5])
