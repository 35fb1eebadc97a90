"""Any text a model can return is recorded faithfully and scored by every env; resume never trips on it (#14.1)."""

import json

import pytest

import rlvr_gym
from rlvr_gym import Agent, AgentStep, EnvUnavailable, Outcome
from rlvr_gym.episode_log import decode_episode
from rlvr_gym.rollout import collect_sync

HOSTILE = [
    "answer \ud800 lone high surrogate",
    "\udcff\udc80 undecodable bytes (surrogateescape)",
    "nul\x00in\x00the\x00middle",
    "\ufeffBOM, \u202eRTL override\u202c, \U0001f600 and \uffff",
    "x" * 10_000_000,  # 10 MB
]
ENV_IDS = [info.id for info in rlvr_gym.list_envs()]


class HostileAgent(Agent):
    """Answers task i with HOSTILE[i] on its first turn and a short junk line after that."""

    async def act(self, ctx, observation):
        text = HOSTILE[int(ctx.task.metadata.get("index", 0)) % len(HOSTILE)] if ctx.turn == 0 else "?"
        return AgentStep(text=text)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("env_id", ENV_IDS + ["rlvr/Trap-v0"])
def test_hostile_text_through_every_env(env_id, tmp_path):
    try:
        rlvr_gym.make(env_id)
    except EnvUnavailable as exc:
        pytest.skip(f"{env_id}: {exc}")
    out = tmp_path / "e.jsonl"
    episodes = collect_sync(
        env_id,
        HostileAgent(),
        tasks=len(HOSTILE),
        concurrency=2,
        output=out,
        env_kwargs={"max_turns": 2} if _takes_max_turns(env_id) else None,
    )
    errors = {e.task_index: e.error for e in episodes if e.error is not None}
    assert not errors, f"{env_id}: hostile text caused infrastructure errors: {errors}"
    assert all(e.outcome in (Outcome.SCORED, Outcome.INVALID) and e.reward is not None for e in episodes)
    rows = out.read_bytes().splitlines()
    assert len(rows) == len(HOSTILE)
    recorded = {decode_episode(row).task_index: decode_episode(row) for row in rows}
    for episode in episodes:
        assert recorded[episode.task_index].turns[0].action == HOSTILE[episode.task_index % len(HOSTILE)]
        assert json.loads(rows[0]) is not None
    resumed = collect_sync(
        env_id,
        HostileAgent(),
        tasks=len(HOSTILE),
        output=out,
        resume=True,
        env_kwargs={"max_turns": 2} if _takes_max_turns(env_id) else None,
    )
    assert [e.episode_id for e in resumed] == [e.episode_id for e in episodes]
    assert len(out.read_bytes().splitlines()) == len(HOSTILE)


def _takes_max_turns(env_id: str) -> bool:
    """Multi-turn envs get a short turn limit to keep the test fast (answer envs take max_attempts instead)."""
    try:
        rlvr_gym.make(env_id, max_turns=2)
        return True
    except TypeError:
        return False
