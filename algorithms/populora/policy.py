"""Sampling from and training one named LoRA adapter of a shared peft model: the machinery every self-play loop uses.

PopuLoRA's population, the AZR single-agent baseline and GeoX self-play all do the same two things with an adapter:
sample completions for a batch of prompts (one completion per prompt, as AZR's rollout.n = 1) and take one
REINFORCE step on the rewarded samples with task-relative baselines (`estimator.py`: rewards whitened inside each
(task type, role) key of the adapter's batch). Keeping both here means a fix to either reaches every loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from rlvr_gym.algorithms.advantages import AdvantageInput, compute_advantages

GENERATE_CHUNK = 16  # prompts per generate call (bounds memory of the padded batch on CPU)


@dataclass
class Sample:
    """One rewarded completion of one adapter; `key` is the (role, task type) batch it is whitened in."""

    member: str
    key: str
    prompt_ids: torch.Tensor
    completion_ids: torch.Tensor
    reward: float


def encode_chat(tokenizer: Any, prompt: str) -> torch.Tensor:
    """Token ids of a one-turn chat prompt with the generation header appended."""
    messages = [{"role": "user", "content": prompt}]
    text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return tokenizer(text, return_tensors="pt").input_ids[0]


def _left_padded(prompts: Sequence[torch.Tensor], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    width = max(p.numel() for p in prompts)
    ids = torch.full((len(prompts), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(prompts), width), dtype=torch.long)
    for i, p in enumerate(prompts):
        ids[i, width - p.numel() :] = p
        mask[i, width - p.numel() :] = 1
    return ids, mask


@torch.no_grad()
def generate(
    model: Any,
    tokenizer: Any,
    adapter: str,
    prompts: Sequence[torch.Tensor],
    *,
    temperature: float = 1.0,
    max_new_tokens: int = 96,
    greedy: bool = False,
) -> list[tuple[torch.Tensor, str]]:
    """One sampled completion per prompt from `adapter`: (completion ids up to and including EOS, decoded text).

    Prompts of different lengths are left-padded into one batch per chunk; that is what lets every teacher draw a
    different set of references per proposal (AZR's batch) at the cost of one generate call."""
    model.set_adapter(adapter)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    out: list[tuple[torch.Tensor, str]] = []
    for start in range(0, len(prompts), GENERATE_CHUNK):
        chunk = prompts[start : start + GENERATE_CHUNK]
        ids, mask = _left_padded(chunk, pad_id)
        rows = model.generate(
            input_ids=ids,
            attention_mask=mask,
            do_sample=not greedy,
            temperature=temperature if not greedy else None,
            top_p=None,
            top_k=None,
            max_new_tokens=max_new_tokens,
            pad_token_id=pad_id,
        )
        for row in rows[:, ids.shape[1] :]:
            eos = (row == tokenizer.eos_token_id).nonzero()
            row = row[: int(eos[0]) + 1] if len(eos) else row
            out.append((row.clone(), tokenizer.decode(row, skip_special_tokens=True)))
    return out


def adapter_parameters(model: Any, adapter: str) -> list[torch.nn.Parameter]:
    """The LoRA factors of one adapter, marked trainable (the base and the other adapters stay frozen)."""
    params = [p for n, p in model.named_parameters() if f".{adapter}." in n]
    for p in params:
        p.requires_grad_(True)
    return params


def task_relative_advantages(samples: Sequence[Sample]) -> np.ndarray:
    """Task-relative REINFORCE++ advantages of one adapter's batch (whitened per sample key)."""
    inp = AdvantageInput(
        episodes=[],
        group_ids=[f"e{i}" for i in range(len(samples))],
        rewards=np.array([x.reward for x in samples], dtype=float),
        task_keys=[x.key for x in samples],
    )
    return compute_advantages("task_relative_reinforce_pp", inp).episode


def reinforce_update(model: Any, optimizer: torch.optim.Optimizer, adapter: str, samples: Sequence[Sample]) -> bool:
    """One optimizer step of `adapter` on its samples: loss = -sum_i A_i * mean-token log p(completion_i) / N.

    Returns False (and leaves the weights alone) when no sample has a non-zero advantage: a key whose rewards all
    tie carries no signal, exactly as in AZR."""
    adv = task_relative_advantages(samples) if samples else np.zeros(0)
    if not np.any(adv):
        return False
    model.set_adapter(adapter)
    optimizer.zero_grad()
    for x, a in zip(samples, adv, strict=True):
        if a == 0 or x.completion_ids.numel() == 0:
            continue
        ids = torch.cat([x.prompt_ids, x.completion_ids])[None]
        logits = model(input_ids=ids).logits[0, x.prompt_ids.numel() - 1 : -1]
        lp = torch.log_softmax(logits.float(), -1).gather(-1, x.completion_ids[:, None]).mean()
        (-float(a) * lp / len(samples)).backward()
    optimizer.step()
    return True
