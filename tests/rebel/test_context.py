"""ReBel's agent context (docs/alfworld.md): each turn's prompt holds the cumulative belief, the last 2 actions, the
current observation and the admissible actions, never older turns, so its length does not grow with the episode."""

from __future__ import annotations

import asyncio
import re

import pytest

from rlvr_gym.agent import EpisodeContext
from rlvr_gym.types import Generation, Message

pytest.importorskip("alfworld")

EASY = {
    "task_types": ["pick_and_place"],
    "max_receptacles": 4,
    "max_distractor_types": 1,
    "max_instances": 1,
    "max_turns": 8,
    "prompt_style": "rebel",
}


class ReplayPolicy:
    """Answers each request with the next scripted reply and records the messages it was prompted with."""

    tokenizer = None

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)
        self.prompts: list[list[Message]] = []

    async def generate(self, requests):
        self.prompts.append([Message.model_validate(m) for m in requests[0].messages])
        return [Generation(text=self.replies.pop(0))]


def play(agent_class, replies: list[str], env) -> list[list[Message]]:
    """Play `replies` through `agent_class` on `env`'s current task; returns each turn's prompt."""
    policy = ReplayPolicy(replies)
    agent = agent_class(policy, system_prompt="Be brief.", token_in_token_out=False)
    ctx = EpisodeContext(task=env.task.view(), seed=0)
    observation, _ = env.reset(options={"task": env.task})
    for _ in replies:
        step = asyncio.run(agent.act(ctx, [Message.model_validate(m) for m in observation]))
        observation, _, terminated, truncated, _ = env.step(step.text)
        if terminated or truncated:
            break
    return policy.prompts


@pytest.fixture(scope="module")
def episode(tmp_path_factory):
    """An easy game, its expert's tagged replies and its reference actions."""
    from rlvr_gym.envs.alfworld.env import ALFWorldEnv

    env = ALFWorldEnv(cache_dir=str(tmp_path_factory.mktemp("alfworld")), size=4, **EASY)
    env.reset(options={"task_index": 1})
    task = env.task
    replies = env.expert_replies(task)
    env.reset(options={"task": task})
    yield env, replies, list(task.reference_actions)
    env.close()


def test_prompt_holds_only_the_last_two_actions(episode):
    from rlvr_gym.algorithms.rebel.context import CurrentTurnAgent

    env, replies, actions = episode
    # the expert's plan, padded with `look` turns so the episode is longer than the context window
    looks = [replies[0].replace(f"<action>{actions[0]}</action>", "<action>look</action>")] * 3
    prompts = play(CurrentTurnAgent, looks + replies, env)
    played = ["look"] * 3 + actions
    assert len(prompts) == len(played) > 4
    for turn, prompt in enumerate(prompts):
        assert [m.role for m in prompt] == ["system", "user"]  # no replayed assistant turns
        text = prompt[-1].text()
        assert text.count("Observation:") == 1 and text.count("<belief_prev>{") == 1
        recent = re.search(r"Recent actions: (.*)", text)
        assert (recent.group(1).split("; ") if recent else []) == played[max(0, turn - 2) : turn]
        assert "Your task is to:" in text and "Admissible actions:" in text
        for older in replies:  # earlier raw replies never come back (only the merged belief does)
            assert older not in text


def test_prompt_length_is_bounded_while_a_chat_agent_grows(episode):
    """The same episode through a ChatAgent replays every turn (the test fails if the context rule is lost)."""
    from rlvr_gym.agents.chat import ChatAgent
    from rlvr_gym.algorithms.rebel.context import CurrentTurnAgent

    env, replies, _ = episode
    current = [sum(len(m.text()) for m in p) for p in play(CurrentTurnAgent, replies, env)]
    chat = [sum(len(m.text()) for m in p) for p in play(ChatAgent, replies, env)]
    assert chat[-1] > sum(current[:-1])  # the chat prompt holds all earlier turns
    assert max(current) < 2 * current[0]  # belief and the window of 2 actions only


def test_rebel_style_defaults_to_the_current_turn_context():
    from rlvr_gym.algorithms.train_config import default_context

    assert default_context({"prompt_style": "rebel"}) == "current"
    assert default_context({"prompt_style": "plain"}) == "history"
