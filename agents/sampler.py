"""A batched sampling loop over a causal LM with a KV cache, written for RL rollouts rather than `model.generate`.

Why not `generate`: rollouts need, per row, their own temperature/top-p/max tokens/stop strings, a private random
generator (so a seeded row samples the same tokens whatever else shares its batch), and the log-probability of each
sampled token under the *raw* model distribution (temperature 1, no top-p), which is what PPO/GRPO ratios compare
against. Rows are left-padded; finished rows leave the batch (the cache shrinks with them), so one long answer does
not make seven short ones pay for its length.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch


@dataclass
class Row:
    """One sequence to continue."""

    prompt_ids: list[int]
    temperature: float = 1.0
    top_p: float = 1.0
    max_new_tokens: int = 256
    stop: list[str] = field(default_factory=list)
    seed: int | None = None


@dataclass
class RowResult:
    token_ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    finish_reason: str = "length"  # "stop" (EOS or a stop string) or "length"
    stopped_by_string: bool = False


def make_generator(seed: int | None) -> torch.Generator:
    generator = torch.Generator()
    if seed is None:
        generator.seed()  # fresh OS entropy: unseeded rows are not reproducible, by design
    else:
        generator.manual_seed(int(seed) % (1 << 63))
    return generator


def sample_token(logits: torch.Tensor, temperature: float, top_p: float, generator: torch.Generator) -> int:
    """Sample one token id from a 1-D float logits row (CPU); temperature <= 0 means greedy."""
    if temperature <= 0:
        return int(torch.argmax(logits))
    probs = torch.softmax(logits / temperature, dim=-1)
    if top_p >= 1.0:
        return _draw(probs, generator)
    sorted_probs, order = torch.sort(probs, descending=True)
    # Keep the smallest prefix whose mass reaches top_p (the token that crosses the threshold stays in).
    sorted_probs[(torch.cumsum(sorted_probs, dim=-1) - sorted_probs) > top_p] = 0.0
    return int(order[_draw(sorted_probs, generator)])


def _draw(weights: torch.Tensor, generator: torch.Generator) -> int:
    """Inverse-CDF draw from unnormalised weights: one uniform per token (torch.multinomial is ~40x slower here)."""
    cdf = torch.cumsum(weights, dim=-1)
    u = torch.rand((), generator=generator, dtype=cdf.dtype) * cdf[-1]
    # The first index whose cumulative mass exceeds u; zero-weight tokens can never be picked.
    return int(torch.searchsorted(cdf, u.reshape(1), right=True).clamp(max=cdf.numel() - 1))


@contextlib.contextmanager
def inference_mode(model: Any, autocast: bool) -> Iterator[None]:
    """eval() + no_grad (+ bf16 autocast) for the duration, restoring the caller's train/eval mode afterwards."""
    was_training = bool(getattr(model, "training", False))
    model.eval()
    device_type = _device(model).type
    cast = torch.autocast(device_type, dtype=torch.bfloat16) if autocast else contextlib.nullcontext()
    try:
        with torch.no_grad(), cast:
            yield
    finally:
        model.train(was_training)


def _device(model: Any) -> torch.device:
    return next(model.parameters()).device


def _cache_name(model: Any) -> str:
    """transformers >= 5.x calls the KV cache argument/output `cache`; older versions `past_key_values`."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    return "cache" if "cache" in inspect.signature(type(base).forward).parameters else "past_key_values"


def generate_rows(
    model: Any,
    rows: list[Row],
    *,
    pad_id: int,
    eos_ids: set[int],
    decode: Callable[[list[int]], str],
    autocast: bool = False,
) -> list[RowResult]:
    """Continue every row; the model must be a HF causal LM accepting `past_key_values` and `logits_to_keep`."""
    if not rows:
        return []
    for row in rows:
        if not row.prompt_ids:
            raise ValueError("empty prompt: at least one prompt token is needed")
    results = [RowResult() for _ in rows]
    generators = [make_generator(row.seed) for row in rows]
    device = _device(model)
    width = max(len(row.prompt_ids) for row in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        ids[i, width - len(row.prompt_ids):] = torch.tensor(row.prompt_ids, dtype=torch.long)
        mask[i, width - len(row.prompt_ids):] = 1
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    active = list(range(len(rows)))  # batch position -> row index
    cache_name = _cache_name(model)
    with inference_mode(model, autocast):
        out = model(
            input_ids=ids.to(device), attention_mask=mask.to(device), position_ids=positions.to(device),
            use_cache=True, logits_to_keep=1,
        )
        cache = out[cache_name]
        next_pos = positions[:, -1] + 1
        while True:
            logits = out.logits[:, -1, :].float().cpu()
            logprobs = torch.log_softmax(logits, dim=-1)
            keep: list[int] = []
            tokens: list[int] = []
            for b, i in enumerate(active):
                token = sample_token(logits[b], rows[i].temperature, rows[i].top_p, generators[i])
                results[i].token_ids.append(token)
                results[i].logprobs.append(float(logprobs[b, token]))
                if not _finished(rows[i], results[i], eos_ids, decode):
                    keep.append(b)
                    tokens.append(token)
            if not keep:
                break
            if len(keep) < len(active):
                index = torch.tensor(keep, dtype=torch.long)
                cache.batch_select_indices(index.to(device))
                mask, next_pos = mask[index], next_pos[index]
                active = [active[b] for b in keep]
            mask = torch.cat([mask, torch.ones((len(active), 1), dtype=torch.long)], dim=1)
            out = model(
                input_ids=torch.tensor(tokens, dtype=torch.long)[:, None].to(device),
                attention_mask=mask.to(device),
                position_ids=next_pos[:, None].to(device),
                use_cache=True,
                logits_to_keep=1,
                **{cache_name: cache},
            )
            cache = out[cache_name]
            next_pos = next_pos + 1
    return results


def _finished(row: Row, result: RowResult, eos_ids: set[int], decode: Callable[[list[int]], str]) -> bool:
    if result.token_ids[-1] in eos_ids:
        result.finish_reason = "stop"
        return True
    if row.stop:
        # A stop string of n characters spans at most n tokens (+ a few for multi-byte pieces): decode only the tail.
        tail = decode(result.token_ids[-(max(len(s) for s in row.stop) + 4):])
        if any(s and s in tail for s in row.stop):
            result.finish_reason = "stop"
            result.stopped_by_string = True
            return True
    if len(result.token_ids) >= row.max_new_tokens:
        result.finish_reason = "length"
        return True
    return False


def cut_at_stop(text: str, stop: list[str]) -> str:
    """The text before the earliest stop string (OpenAI semantics: the stop string itself is not returned)."""
    cuts = [text.find(s) for s in stop if s and s in text]
    return text[: min(cuts)] if cuts else text
