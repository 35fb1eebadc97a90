"""Self-play loop with a scripted test double: validity gating and learnability arithmetic."""

from __future__ import annotations

import asyncio

import pytest

from rlvr_gym.agent import Agent, AgentStep
from rlvr_gym.envs.geo.selfplay import proposer_reward, run_selfplay
from rlvr_gym.envs.geo.sources import SOURCES


class Scripted(Agent):
    """Proposes `proposal`; as solver answers with the count of trees it reads off the text on even samples."""

    def __init__(self, proposal: str) -> None:
        self.proposal = proposal

    async def act(self, ctx, observation):
        text = observation[-1].text()
        if ctx.task.id.startswith("geo/selfplay/propose"):
            return AgentStep(self.proposal)
        trees = text.count(" tree disc ")
        return AgentStep(f"ANSWER: {trees if ctx.sample_index == 0 else trees + 50}")


def test_learnability_zero_at_extremes():
    assert proposer_reward(True, 0.0) == (0.5, 0.0)
    assert proposer_reward(True, 1.0) == (0.5, 0.0)
    assert proposer_reward(True, 0.5) == (0.75, 0.5)
    assert proposer_reward(False, 0.5)[0] == 0.0


def test_valid_proposal_is_solved_half_the_time():
    log = asyncio.run(run_selfplay(Scripted('ANSWER: ["count", ["objects", "tree"]]'), proposals=2, samples=2))
    assert all(row["valid"] for row in log.rows)
    assert all(row["solve_rate"] == 0.5 and row["learnability"] == 0.5 for row in log.rows)


def test_invalid_proposal_gets_nothing():
    log = asyncio.run(run_selfplay(Scripted('ANSWER: ["count", ["objects", "dragon"]]'), proposals=2, samples=2))
    assert log.summary()["validity_rate"] == 0.0 and log.summary()["mean_proposer_reward"] == 0.0


@pytest.mark.skipif(SOURCES["osm"].available() is not None, reason="run scripts/setup_geo.sh first")
def test_selfplay_on_osm_scenes():
    log = asyncio.run(
        run_selfplay(Scripted('ANSWER: ["count", ["objects", "tree"]]'), proposals=1, samples=2, source="osm")
    )
    assert log.summary()["proposals"] == 1 and log.rows[0]["proposer_reward"] in (0.0, 0.5, 0.75)
