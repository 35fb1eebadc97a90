"""Test doubles for NudgeRL: a tiny random Llama (real forward passes) and an env whose reward varies per sample."""

from __future__ import annotations

import pytest

import rlvr_gym
from rlvr_gym import AnswerEnv, Task, Verdict


class VowelEnv(AnswerEnv):
    """Reward = fraction of vowels among the answer's letters: random text gets varied, non-zero advantages."""

    family = "test"

    def get_task(self, index: int) -> Task:
        return Task(
            id=f"vowel/train/{index}",
            prompt=f"Say something about {index}.",
            ground_truth=None,
            metadata={"index": index},
        )

    def score_answer(self, task: Task, text: str) -> Verdict:
        letters = [c for c in text.lower() if c.isalpha()]
        reward = sum(c in "aeiou" for c in letters) / len(letters) if letters else 0.0
        return Verdict(reward=reward, passed=reward >= 0.4)


@pytest.fixture(scope="session")
def vowel_env_id() -> str:
    rlvr_gym.register("rlvr/TestNudgeVowel-v0", VowelEnv, family="test")
    return "rlvr/TestNudgeVowel-v0"


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


def nudge_data(env_id: str, run_dir, *, steps: int = 1, distill_coef: float = 0.1, **nudge) -> dict:
    """A tiny NudgeRL config dict: 2 problems x (2 contexts x 2 rollouts), 6 new tokens."""
    return {
        "run_dir": str(run_dir),
        "seed": 5,
        "steps": steps,
        "tensorboard": False,
        "progress": False,
        "model": {"lora": {"r": 4, "alpha": 8}, "threads": 2},
        "rollout": {
            "env": env_id,
            "prompts_per_step": 2,
            "group_size": 4,
            "max_new_tokens": 6,
            "system_prompt": "Answer briefly.",
        },
        "eval": {"num_tasks": 2, "every": 100, "max_new_tokens": 4},
        "estimator": "nudge",
        "estimator_params": {"adv_lambda": 1.1},
        "optim": {"lr": 5e-3},
        "minibatches": 1,
        "micro_batch_tokens": 512,
        "checkpoint_every": 100,
        "nudge": {
            "contexts_per_problem": 2,
            "rollouts_per_context": 2,
            "p_drop": 0.5,
            "distill_coef": distill_coef,
            "pass_at_k": 2,
            **nudge,
        },
    }
