"""Which episodes make a step's batch, and episodes + advantages -> padded token rows for the loss, without ever
re-tokenising.

Dynamic sampling (DAPO; `fill_mixed_groups`) keeps drawing prompts until the batch holds the asked number of groups
whose rewards differ: an all-equal group has zero group-relative advantage, so it would only shrink the batch.

A multi-turn episode becomes one row when each turn's prompt ids extend the previous turn's prompt + generated ids
(the usual case for a chat agent that appends to its conversation); the env/tool tokens between turns are in the
row with mask 0, so they are context but never get gradient. When a turn's prompt is not such an extension (the
agent rewrote history, e.g. a sliding window), a new row starts: still exact, just less sharing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from rlvr_gym.types import Episode

from .advantages.base import COLLAPSE_VAR, AdvantageOutput

DrawTasks = Callable[[int, int, set[int]], list[int]]  # (try, how many, already drawn) -> task indices
CollectTasks = Callable[[list[int], int], list[Episode]]  # (task indices, try) -> their episodes


def generated_tokens(ep: Episode) -> int:
    return sum(len(t.token_ids or []) for t in ep.turns)


def by_group(episodes: Sequence[Episode]) -> dict[str, list[Episode]]:
    groups: dict[str, list[Episode]] = {}
    for ep in episodes:
        groups.setdefault(ep.group_id, []).append(ep)
    return groups


def mixed_rewards(group: Sequence[Episode], collapse_var: float = COLLAPSE_VAR) -> bool:
    """True when the group's scored rewards differ (>= 2 of them): the only groups with a learning signal."""
    rewards = [ep.reward for ep in group if ep.error is None and ep.reward is not None]
    return len(rewards) >= 2 and float(np.var(rewards)) >= collapse_var


def fill_mixed_groups(
    draw: DrawTasks, collect: CollectTasks, want: int, max_tries: int
) -> tuple[list[Episode], dict[str, float]]:
    """Collect until `want` groups of mixed reward are kept or `max_tries` collections are spent (DAPO).

    The first try draws `want` prompts; each later one draws only as many new prompts as the mixed rate seen so far
    says are missing (at most `want`), so the refill costs few wasted rollouts. Mixed groups beyond `want` are
    dropped, as in DAPO. Metrics: prompts `drawn`, groups `kept`, `tries`, and every token generated on the way.
    """
    kept: list[list[Episode]] = []
    first: list[Episode] = []
    seen: set[int] = set()
    drawn, tries, tokens = 0, 0, 0
    rewards: list[float] = []
    n = want
    while tries < max_tries and len(kept) < want:
        tasks = draw(tries, n, seen)
        if not tasks:
            break
        seen.update(tasks)
        episodes = collect(tasks, tries)
        first = first or episodes
        tries += 1
        groups = by_group(episodes)
        drawn += len(groups)
        tokens += sum(generated_tokens(ep) for ep in episodes)
        rewards += [ep.reward for ep in episodes if ep.error is None and ep.reward is not None]
        kept += [g for g in groups.values() if mixed_rewards(g)]
        rate = len(kept) / drawn
        n = want if rate == 0 else min(want, math.ceil((want - len(kept)) / rate))
    kept = kept[:want]
    metrics = {
        "sampling/drawn": float(drawn),
        "sampling/kept": float(len(kept)),
        "sampling/tries": float(tries),
        "sampling/gen_tokens": float(tokens),
        "sampling/reward_mean": float(np.mean(rewards)) if rewards else 0.0,  # over every drawn rollout
    }
    # No mixed group at all: the first draw stands (zero advantages, so no update, but its rewards are logged).
    return [ep for g in kept for ep in g] or first, metrics


@dataclass
class Row:
    """One training sequence; per-position lists aligned with `input_ids` (value at the generated token itself)."""

    input_ids: list[int] = field(default_factory=list)
    loss_mask: list[int] = field(default_factory=list)
    old_logprobs: list[float] = field(default_factory=list)
    advantages: list[float] = field(default_factory=list)
    episode: int = 0
    ref_logprobs: list[float] | None = None  # filled by the trainer when a KL reference is used

    def extend(
        self,
        ids: Sequence[int],
        *,
        generated: bool,
        logprobs: Sequence[float] | None = None,
        advantages: Sequence[float] | None = None,
    ) -> None:
        n = len(ids)
        self.input_ids.extend(int(i) for i in ids)
        self.loss_mask.extend([int(generated)] * n)
        missing = math.nan if generated else 0.0  # NaN = behaviour log-prob unknown, recomputed before the update
        self.old_logprobs.extend([float(x) for x in logprobs] if logprobs is not None else [missing] * n)
        self.advantages.extend([float(a) for a in advantages] if advantages is not None else [0.0] * n)

    @property
    def n_generated(self) -> int:
        return sum(self.loss_mask)


def episode_rows(ep: Episode, index: int, adv: AdvantageOutput, max_len: int | None = None) -> list[Row]:
    """Rows of one episode (usually one); turns without token ids (scripted agents) are skipped."""
    rows: list[Row] = []
    cur: Row | None = None
    for t, turn in enumerate(ep.turns):
        if not turn.token_ids or turn.prompt_token_ids is None:
            cur = None
            continue
        prompt, gen = list(turn.prompt_token_ids), list(turn.token_ids)
        logprobs = turn.logprobs if turn.logprobs is not None and len(turn.logprobs) == len(gen) else None
        if cur is not None and prompt[: len(cur.input_ids)] == cur.input_ids:
            context = prompt[len(cur.input_ids) :]
        else:
            cur = Row(episode=index)
            rows.append(cur)
            context = prompt
        cur.extend(context, generated=False)
        cur.extend(gen, generated=True, logprobs=logprobs, advantages=adv.token_advantages(index, t, len(gen)))
    if max_len is not None:
        for row in rows:
            for name in ("input_ids", "loss_mask", "old_logprobs", "advantages"):
                setattr(row, name, getattr(row, name)[:max_len])
    return [r for r in rows if r.n_generated > 0]


def build_rows(
    episodes: Sequence[Episode], adv: AdvantageOutput, max_len: int | None = None, skip_zero_advantage: bool = True
) -> list[Row]:
    """Rows of every kept episode. Rows whose advantages are all zero carry no policy gradient and are skipped
    by default (they would only cost compute; a KL/entropy term would still want them: pass False)."""
    rows: list[Row] = []
    for i, ep in enumerate(episodes):
        if not adv.keep[i] or ep.error is not None:
            continue
        for row in episode_rows(ep, i, adv, max_len):
            if skip_zero_advantage and not any(
                a != 0.0 for a, m in zip(row.advantages, row.loss_mask, strict=True) if m
            ):
                continue
            rows.append(row)
    return rows


def padded_length(n: int, multiple: int) -> int:
    """Round a length up to a multiple: few distinct shapes, so oneDNN's per-shape kernels are built once, not
    every step (measured: a new shape costs seconds of kernel creation for a 30-layer model under bf16)."""
    return -(-n // multiple) * multiple if multiple > 1 else n


def micro_batches(rows: Sequence[Row], token_budget: int, max_rows: int = 64, pad_multiple: int = 1) -> list[list[Row]]:
    """Length-sorted micro-batches whose padded size (rows x padded longest) stays within `token_budget`."""
    order = sorted(rows, key=lambda r: len(r.input_ids))
    batches: list[list[Row]] = []
    cur: list[Row] = []
    for row in order:
        longest = padded_length(max([len(row.input_ids)] + [len(r.input_ids) for r in cur]), pad_multiple)
        if cur and (longest * (len(cur) + 1) > token_budget or len(cur) >= max_rows):
            batches.append(cur)
            cur = []
        cur.append(row)
    if cur:
        batches.append(cur)
    return batches


@dataclass
class Batch:
    """Right-padded tensors; `targets`, `mask`, `old_logprobs`, `advantages` are shifted to predicted positions."""

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    targets: torch.Tensor
    mask: torch.Tensor
    old_logprobs: torch.Tensor
    advantages: torch.Tensor
    rows: list[Row]
    ref_logprobs: torch.Tensor | None = None


def collate(rows: Sequence[Row], pad_id: int = 0, pad_multiple: int = 1) -> Batch:
    length = padded_length(max(len(r.input_ids) for r in rows), pad_multiple)
    n = len(rows)
    ids = torch.full((n, length), pad_id, dtype=torch.long)
    attn = torch.zeros((n, length), dtype=torch.long)
    mask = torch.zeros((n, length), dtype=torch.float32)
    old = torch.zeros((n, length), dtype=torch.float32)
    adv = torch.zeros((n, length), dtype=torch.float32)
    for i, r in enumerate(rows):
        k = len(r.input_ids)
        ids[i, :k] = torch.tensor(r.input_ids)
        attn[i, :k] = 1
        mask[i, :k] = torch.tensor(r.loss_mask, dtype=torch.float32)
        old[i, :k] = torch.tensor(r.old_logprobs, dtype=torch.float32)
        adv[i, :k] = torch.tensor(r.advantages, dtype=torch.float32)
    ref = None
    if all(r.ref_logprobs is not None for r in rows):
        ref = torch.zeros((n, length), dtype=torch.float32)
        for i, r in enumerate(rows):
            ref[i, : len(r.input_ids)] = torch.tensor(r.ref_logprobs, dtype=torch.float32)
        ref = ref[:, 1:]
    mask[:, 0] = 0.0  # the first token has no prediction
    return Batch(ids, attn, ids[:, 1:], mask[:, 1:], old[:, 1:], adv[:, 1:], list(rows), ref)


def scatter_to_rows(rows: Sequence[Row], values: torch.Tensor, attr: str) -> None:
    """Write per-predicted-position values [rows, T-1] back into each row's list `attr` at generated positions."""
    for i, r in enumerate(rows):
        target = getattr(r, attr)
        if target is None:
            target = [0.0] * len(r.input_ids)
            setattr(r, attr, target)
        for p in range(1, len(r.input_ids)):
            if r.loss_mask[p]:
                target[p] = float(values[i, p - 1])
