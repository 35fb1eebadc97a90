"""DAPO through the trainer on a tiny model: dynamic sampling refills the batch with mixed-reward groups, so a DAPO
step updates differently from a GRPO step of the same seed; a token budget ends a run at its nearest step boundary."""

from __future__ import annotations

import copy
import random
from types import SimpleNamespace

import pytest
import torch

import rlvr_gym
from rlvr_gym import AnswerEnv, Task, Verdict
from rlvr_gym.algorithms.metrics import read_metrics
from rlvr_gym.algorithms.modeling import trainable_state
from rlvr_gym.algorithms.train_config import load_config
from rlvr_gym.algorithms.trainer import Trainer

POOL, PROMPTS = 6, 2


class GateEnv(AnswerEnv):
    """Even tasks pay 0 whatever the answer (an all-equal group), odd ones the answer's vowel fraction (mixed)."""

    family = "test"

    def __init__(self, **kwargs):
        super().__init__(max_attempts=1, **kwargs)

    def get_task(self, index: int) -> Task:
        return Task(id=f"gate-{index}", prompt=f"Say something about {index}.", ground_truth=None, metadata={})

    def score_answer(self, task: Task, text: str) -> Verdict:
        letters = [c for c in text.lower() if c.isalpha()]
        vowels = sum(c in "aeiou" for c in letters) / len(letters) if letters else 0.0
        reward = 0.0 if int(task.id.split("-")[1]) % 2 == 0 else vowels
        return Verdict(reward=reward, passed=reward >= 0.5)


@pytest.fixture(scope="module")
def gate_env_id() -> str:
    rlvr_gym.register("rlvr/TestGate-v0", GateEnv, family="test")
    return "rlvr/TestGate-v0"


def seed_with_a_collapsed_group() -> int:
    """A run seed whose first step draws an even (all-equal) task, as `Trainer.train_tasks` draws them."""
    return next(s for s in range(100) if any(i % 2 == 0 for i in random.Random(f"{s}:tasks:0").sample(range(POOL), 2)))


def cfg(env_id: str, run_dir, estimator: str, **extra):
    data = {
        "run_dir": str(run_dir),
        "seed": seed_with_a_collapsed_group(),
        "steps": 1,
        "tensorboard": False,
        "progress": False,
        "model": {"lora": {"r": 4, "alpha": 8}, "threads": 1},
        "rollout": {
            "env": env_id,
            "prompts_per_step": PROMPTS,
            "group_size": 3,
            "task_pool": POOL,
            "sampling": {"max_new_tokens": 6},
        },
        "eval": {"num_tasks": 1, "every": 100, "sampling": {"max_new_tokens": 2}},
        "estimator": estimator,
        "optim": {"lr": 5e-3},
        "micro_batch_tokens": 512,
        "checkpoint_every": 100,
        **extra,
    }
    return load_config(data)


def one_step(env_id, run_dir, estimator, model, tokenizer):
    trainer = Trainer(cfg(env_id, run_dir, estimator), model=copy.deepcopy(model), tokenizer=tokenizer)
    record = trainer.train_step()
    return record, trainable_state(trainer.model)


def test_dapo_refills_and_updates_differently_from_grpo(gate_env_id, tiny_model, tokenizer, tmp_path):
    grpo, grpo_state = one_step(gate_env_id, tmp_path / "g", "grpo", tiny_model, tokenizer)
    again, again_state = one_step(gate_env_id, tmp_path / "g2", "grpo", tiny_model, tokenizer)
    dapo, dapo_state = one_step(gate_env_id, tmp_path / "d", "dapo", tiny_model, tokenizer)
    assert grpo["acr"] > 0  # the first draw holds an all-equal group: GRPO trains on fewer groups
    assert dapo["sampling/kept"] == PROMPTS and dapo["sampling/drawn"] > PROMPTS and dapo["sampling/tries"] >= 2
    assert dapo["acr"] == 0 and dapo["update/rows"] == PROMPTS * 3 > grpo["update/rows"]
    assert dapo["sampling/gen_tokens"] > grpo["sampling/gen_tokens"]  # the refill is paid for in tokens
    lora_b = [n for n in grpo_state if "lora_B" in n]
    assert all(torch.equal(grpo_state[n], again_state[n]) for n in lora_b)  # same seed, same estimator: same update
    assert any(not torch.equal(grpo_state[n], dapo_state[n]) for n in lora_b)  # the refill changes it


def test_a_token_budget_ends_the_run_and_is_evaluated(gate_env_id, tiny_model, tokenizer, tmp_path):
    config = cfg(gate_env_id, tmp_path, "dapo", steps=5, max_gen_tokens=1)
    result = Trainer(config, model=tiny_model, tokenizer=tokenizer).run()
    assert result["step"] == 1 and "eval/pass_rate" in result
    last = read_metrics(tmp_path / "metrics.jsonl")[-1]
    assert last["gen_tokens_total"] == last["sampling/gen_tokens"] > 0 and "eval/pass_rate" in last


@pytest.mark.parametrize(("total", "last", "spent"), [(80, 30, False), (90, 30, True), (0, 0, False), (100, 0, True)])
def test_a_run_ends_at_the_step_boundary_nearest_the_budget(total, last, spent):
    state = SimpleNamespace(cfg=SimpleNamespace(max_gen_tokens=100), gen_tokens_total=total, last_step_tokens=last)
    assert Trainer.budget_spent(state) is spent  # 80 + 30 would end 10 over (nearer than 20 under): go on
