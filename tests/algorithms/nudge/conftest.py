"""NudgeRL test configs; the tiny model, tokenizer and vowel env come from tests/algorithms/conftest.py."""

from __future__ import annotations


def nudge_data(env_id: str, run_dir, *, steps: int = 1, pass_at_k: int = 2, **nudge) -> dict:
    """A tiny NudgeRL config dict: 2 problems x (2 contexts x 2 rollouts), single-attempt episodes, 6 new tokens."""
    return {
        "run_dir": str(run_dir),
        "seed": 5,
        "steps": steps,
        "tensorboard": False,
        "progress": False,
        "algorithm": {"name": "nudge", "contexts_per_problem": 2, "rollouts_per_context": 2, "p_drop": 0.5, **nudge},
        "model": {"lora": {"r": 4, "alpha": 8}, "threads": 2},
        "rollout": {
            "env": env_id,
            "env_kwargs": {"max_attempts": 1},
            "prompts_per_step": 2,
            "group_size": 4,
            "sampling": {"max_new_tokens": 6},
            "system_prompt": "Answer briefly.",
        },
        "eval": {"num_tasks": 2, "every": 100, "sampling": {"max_new_tokens": 4}, "pass_at_k": pass_at_k},
        "estimator": "nudge",
        "estimator_params": {"adv_lambda": 1.1},
        "optim": {"lr": 5e-3},
        "micro_batch_tokens": 512,
        "checkpoint_every": 100,
    }
