"""Test doubles for the trainer: a tiny random Llama (real forward passes, 2 layers, hidden 64) and a small env
whose reward varies across samples so that even a random policy gets non-zero advantages."""

from __future__ import annotations

import pytest

import rlvr_gym
from rlvr_gym import AnswerEnv, Task, Verdict


class LengthEnv(AnswerEnv):
    """Reward = fraction of vowels among the answer's letters: continuous, so groups of random text differ.
    Two attempts, so an episode can have two turns (exercises multi-turn rows)."""

    family = "test"

    def __init__(self, max_attempts: int = 2, **kwargs):
        super().__init__(max_attempts=max_attempts, **kwargs)

    def get_task(self, index: int) -> Task:
        return Task(
            id=f"len-{index}",
            prompt=f"Write a sentence about the number {index}.",
            ground_truth=None,
            metadata={"index": index},
        )

    def score_answer(self, task: Task, text: str) -> Verdict:
        letters = [c for c in text.lower() if c.isalpha()]
        reward = sum(c in "aeiou" for c in letters) / len(letters) if letters else 0.0
        return Verdict(reward=reward, passed=reward >= 0.5, feedback="More vowels, please.")


@pytest.fixture(scope="session")
def length_env_id() -> str:
    rlvr_gym.register("rlvr/TestLength-v0", LengthEnv, family="test")
    return "rlvr/TestLength-v0"


@pytest.fixture(scope="session")
def tokenizer():
    from transformers import AutoTokenizer

    from rlvr_gym.agents.models import smollm2_path

    return AutoTokenizer.from_pretrained(str(smollm2_path()))


@pytest.fixture()
def tiny_model(tokenizer):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
    )
    return LlamaForCausalLM(cfg)


@pytest.fixture()
def reply_logp():
    """`reply_logp(model, episodes)`: each episode's mean token log-prob of its replies under `model` (no grad),
    for checks that an update moved the likelihood of some replies up and of others down."""
    import numpy as np
    import torch

    from rlvr_gym.algorithms.advantages import AdvantageOutput
    from rlvr_gym.algorithms.batch import build_rows, collate
    from rlvr_gym.algorithms.modeling import token_logprobs

    def mean_logp(model, episodes) -> np.ndarray:
        rows = build_rows(episodes, AdvantageOutput(episode=np.ones(len(episodes))), skip_zero_advantage=False)
        with torch.no_grad():
            batch = collate(rows)
            lp = token_logprobs(model, batch, autocast=False)[0]
        return (lp.sum(1) / batch.mask.sum(1)).numpy()

    return mean_logp


@pytest.fixture()
def one_turn_episodes():
    """`one_turn_episodes(replies, ...)`: one single-turn episode per reply, all in one group `g` (ids `e0`, `e1`, …):
    what the estimator and trainer tests score. With a tokenizer the reply's token ids are set (and EOS appended
    with `eos=True`); `verdicts` and `metadata` go on every episode in order / as given."""
    from rlvr_gym.types import Episode, Message, Turn

    def build(
        replies: list[str],
        *,
        tokenizer=None,
        prompt: list[int] | None = None,
        observation: tuple[Message, ...] = (),
        eos: bool = False,
        verdicts: list[Verdict] | None = None,
        metadata: dict | None = None,
    ) -> list[Episode]:
        episodes = []
        for i, reply in enumerate(replies):
            ids = None
            if tokenizer is not None:
                ids = tokenizer(reply).input_ids + ([tokenizer.eos_token_id] if eos else [])
            turn = Turn(index=0, observation=list(observation), action=reply, prompt_token_ids=prompt, token_ids=ids)
            fields = {"verdict": verdicts[i]} if verdicts is not None else {}
            episodes.append(
                Episode(
                    episode_id=f"e{i}",
                    env_id="x",
                    task_id="t",
                    group_id="g",
                    turns=[turn],
                    task_metadata=dict(metadata or {}),
                    **fields,
                )
            )
        return episodes

    return build
