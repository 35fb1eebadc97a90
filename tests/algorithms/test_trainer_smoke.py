"""Shortened training run on a tiny random model: finite loss, LoRA weights move, checkpoints round-trip and a
resumed run reproduces the uninterrupted run's metrics exactly."""

from __future__ import annotations

import math

import pytest
import torch

from rlvr_gym.algorithms.checkpoint import latest_checkpoint
from rlvr_gym.algorithms.metrics import read_metrics
from rlvr_gym.algorithms.modeling import trainable_state
from rlvr_gym.algorithms.train_config import load_config
from rlvr_gym.algorithms.trainer import Trainer


class Killed(Exception):
    pass


def _cfg(env_id, run_dir, steps=2, **extra):
    data = {
        "run_dir": str(run_dir),
        "seed": 3,
        "steps": steps,
        "tensorboard": False,
        "progress": False,
        "model": {"lora": {"r": 4, "alpha": 8}, "threads": 2},
        "rollout": {"env": env_id, "prompts_per_step": 2, "group_size": 3, "max_new_tokens": 8, "temperature": 1.0},
        "eval": {"num_tasks": 2, "every": 100, "max_new_tokens": 4},
        "optim": {"lr": 5e-3},
        "epochs": 1,
        "minibatches": 2,
        "micro_batch_tokens": 256,
        "checkpoint_every": 1,
    }
    data.update(extra)
    return load_config(data)


def _strip(records):
    return [{k: v for k, v in r.items() if not (k.startswith("time/") or k.endswith("_s"))} for r in records]


def test_training_smoke_and_exact_resume(length_env_id, tiny_model, tokenizer, tmp_path):
    import copy

    base_model = copy.deepcopy(tiny_model)
    trainer = Trainer(_cfg(length_env_id, tmp_path / "a", steps=2), model=tiny_model, tokenizer=tokenizer)
    before = trainable_state(trainer.model)
    result = trainer.run()
    after = trainable_state(trainer.model)
    assert result["step"] == 2
    records = read_metrics(tmp_path / "a" / "metrics.jsonl")
    train_records = [r for r in records if "reward_mean" in r]
    assert len(train_records) == 2 and records[0]["step"] == 0 and "eval/reward_mean" in records[0]
    for r in train_records:
        assert r["update/rows"] > 0
        for key in ("update/pg_loss", "kl_ref", "entropy", "clip_frac", "update/grad_norm", "acr"):
            assert math.isfinite(r[key]), key
    lora_b = [n for n in after if "lora_B" in n]
    assert lora_b and any(not torch.equal(before[n], after[n]) for n in lora_b)  # LoRA B starts at 0 and moves
    assert latest_checkpoint(tmp_path / "a").name == "step-000002"

    # "kill" the run after step 2's metrics are written but before its checkpoint: resume redoes step 2 from step 1
    cfg_b = _cfg(length_env_id, tmp_path / "b", steps=2)

    def kill(record):
        if record["step"] == 2:
            raise Killed

    with pytest.raises(Killed):
        Trainer(cfg_b, model=copy.deepcopy(base_model), tokenizer=tokenizer).run(on_record=kill)
    assert latest_checkpoint(tmp_path / "b").name == "step-000001"
    resumed = Trainer(cfg_b, model=copy.deepcopy(base_model), tokenizer=tokenizer)
    resumed.run()
    assert resumed.step == 2
    again = read_metrics(tmp_path / "b" / "metrics.jsonl")
    diffs = [
        (a["step"], k, a.get(k), b.get(k))
        for a, b in zip(_strip(again), _strip(records), strict=True)
        for k in a.keys() | b.keys()
        if a.get(k) != b.get(k)
    ]
    assert not diffs, diffs[:6]
    torch.testing.assert_close(trainable_state(resumed.model), after, rtol=0, atol=0)


def test_generation_uses_the_training_thread_count(tiny_model, tokenizer, length_env_id, tmp_path):
    """The rollout policy must not fall back to the eval default (half the cores): that made trainer generation
    1.4x slower than TRL's at the same thread setting."""
    from rlvr_gym.algorithms.trainer import default_agent_factory
    from rlvr_gym.types import SamplingParams

    cfg = _cfg(length_env_id, tmp_path, model={"threads": 3})
    agent = default_agent_factory(tiny_model, tokenizer, SamplingParams(), cfg)
    assert agent.policy.inner.num_threads == 3
    previous = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        agent = default_agent_factory(tiny_model, tokenizer, SamplingParams(), _cfg(length_env_id, tmp_path, model={}))
        assert agent.policy.inner.num_threads == 2
    finally:
        torch.set_num_threads(previous)
