"""G2D: a short GRPO warm-up, then offline DPO on pairs the warm-up policy sampled (arXiv 2605.21266, "How Much
Online RL is Enough?", no public code; docs/algorithms-more.md).

Why: online RL is expensive per step; the paper finds a few GRPO steps make the policy's samples informative
(calibrated: some right, some wrong on the same prompt), after which one frozen preference set and DPO get further
than the same compute spent on GRPO. The number of pairs barely moves with the warm-up length K; their contrast does.

Three stages, in one run: (1) `steps` = K GRPO steps (the shared trainer, any estimator; K = 0 allowed); (2) with the
warm-up policy pi_K, sample `samples` replies per prompt at `temperature` on `prompts` training prompts, verify
them, keep prompts with 0 < p_hat < 1, and build up to `max_pairs` (correct, incorrect) pairs each; (3) DPO with the
reference = pi_K (its sequence log-probs are computed once, before the first DPO step), beta 0.1, `epochs` passes.
[PAPER]: the three stages, K, DPO with policy and reference from pi_K. [INFERRED] (defaults): n = 8 at
T = 1.0, m = 4 pairs per prompt, beta 0.1, 1-2 epochs, ranking kept prompts by p_hat (1 - p_hat) (`rank`). Our
choices: pairs are taken along diagonals of the (correct x incorrect) grid so the m pairs reuse replies as little as
possible; stage-2 prompts are a seeded draw from the training pool; DPO uses a fresh AdamW at `lr` (default
`optim.lr`), `pairs_per_step` pairs per optimizer step, summed token log-probs of the generated tokens.

Outputs under `RUN_DIR/g2d/`: `pairs.jsonl`, `dpo.jsonl` (per DPO step: loss, reward margin, pair accuracy),
`summary.json` (pair statistics, eval before / after DPO) and `trainable.safetensors` (start or evaluate a run from
it with `model.init_adapter: RUN_DIR/g2d`). `algorithm: {name: g2d, ...}`; a finished stage 3 is not redone.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from pydantic import BaseModel, ConfigDict, Field

from rlvr_gym.types import Episode

from .advantages import AdvantageOutput
from .batch import build_rows, collate
from .modeling import token_logprobs, trainable_state
from .trainer import Trainer, default_agent_factory


@dataclass
class Pair:
    chosen: Episode
    rejected: Episode
    p_hat: float


def pass_rate_groups(episodes: Sequence[Episode]) -> list[tuple[float, list[Episode], list[Episode]]]:
    """(p_hat, correct, incorrect) per group of verified episodes (infrastructure errors dropped), in order."""
    groups: dict[str, list[Episode]] = {}
    for ep in episodes:
        if ep.error is None:
            groups.setdefault(ep.group_id, []).append(ep)
    out = []
    for group in groups.values():
        right = [ep for ep in group if ep.passed]
        wrong = [ep for ep in group if not ep.passed]
        out.append((len(right) / len(group), right, wrong))
    return out


def build_pairs(episodes: Sequence[Episode], max_pairs: int = 4, rank: bool = True) -> list[Pair]:
    """Up to `max_pairs` (correct, incorrect) pairs per prompt with 0 < p_hat < 1 (min(m, n+ n-) of them); with
    `rank`, the most uncertain prompts (largest p_hat (1 - p_hat)) come first."""
    kept = [g for g in pass_rate_groups(episodes) if 0.0 < g[0] < 1.0]
    if rank:
        kept.sort(key=lambda g: -g[0] * (1 - g[0]))  # stable: equal uncertainty keeps sampling order
    pairs: list[Pair] = []
    for p_hat, right, wrong in kept:
        grid = sorted(((i, j) for i in range(len(right)) for j in range(len(wrong))), key=lambda ij: (sum(ij), ij[0]))
        pairs.extend(Pair(right[i], wrong[j], p_hat) for i, j in grid[:max_pairs])
    return pairs


def dpo_loss(
    pol_chosen: torch.Tensor,
    pol_rejected: torch.Tensor,
    ref_chosen: torch.Tensor,
    ref_rejected: torch.Tensor,
    beta: float,
) -> tuple[torch.Tensor, dict[str, float]]:
    """-mean log sigmoid(beta [(pi_c - ref_c) - (pi_r - ref_r)]) over pairs of sequence log-probs."""
    margin = beta * ((pol_chosen - ref_chosen) - (pol_rejected - ref_rejected))
    loss = -F.logsigmoid(margin).mean()
    m = margin.detach()
    return loss, {"margin": float(m.mean()), "accuracy": float((m > 0).float().mean())}


class G2dSettings(BaseModel):
    """`algorithm: {name: g2d, ...}` keys (stage 1 is the run's own `steps`, estimator and optimizer)."""

    model_config = ConfigDict(extra="forbid")

    prompts: int = Field(64, ge=1)
    samples: int = Field(8, ge=2)
    temperature: float = Field(1.0, gt=0.0)
    max_pairs: int = Field(4, ge=1)
    rank: bool = True
    beta: float = Field(0.1, gt=0.0)
    epochs: int = Field(1, ge=1)
    lr: float | None = Field(None, gt=0.0)
    pairs_per_step: int = Field(8, ge=1)


class G2dTrainer(Trainer):
    """The shared trainer for K GRPO steps, then G2D's sampling, pair building and offline DPO."""

    settings_model = G2dSettings

    def __init__(self, cfg: Any, **kwargs: Any) -> None:
        super().__init__(cfg, **kwargs)
        s: G2dSettings = self.settings  # type: ignore[assignment]
        factory = kwargs.get("agent_factory") or default_agent_factory
        sampling = cfg.rollout.sampling.model_copy(update={"temperature": s.temperature})
        self.pair_agent = factory(self.model, self.tokenizer, sampling, cfg)

    def run(self, **kwargs: Any) -> dict[str, Any]:
        out = super().run(**kwargs)
        done = self.run_dir / "g2d" / "summary.json"
        summary = json.loads(done.read_text()) if done.exists() else self.preference_stage()
        return {**out, "g2d": summary}

    def pair_tasks(self) -> list[int]:
        r, s = self.cfg.rollout, self.settings
        rng = random.Random(f"{self.cfg.seed}:g2d:tasks")
        return [r.task_offset + i for i in rng.sample(range(r.task_pool), min(s.prompts, r.task_pool))]  # type: ignore[union-attr]

    def sequence_logprobs(self, episodes: Sequence[Episode]) -> torch.Tensor:
        """Summed log-probs of each episode's generated tokens under the current weights (with grad if enabled)."""
        rows = build_rows(episodes, AdvantageOutput(episode=np.ones(len(episodes))), None, skip_zero_advantage=False)
        total = torch.zeros(len(episodes))
        fwd = {"autocast": self.cfg.model.bf16_autocast, "lm_head_fp32": self.cfg.model.lm_head_fp32}
        for micro in self._micro(rows):
            lp = token_logprobs(self.model, collate(micro, self.pad_id, self.cfg.pad_to_multiple), **fwd)[0]
            index = torch.tensor([r.episode for r in micro])
            total = total.index_add(0, index, lp.sum(1))
        return total

    def preference_stage(self) -> dict[str, Any]:
        """Stages 2 and 3; returns (and writes) the summary."""
        s: G2dSettings = self.settings  # type: ignore[assignment]
        out_dir = self.run_dir / "g2d"
        out_dir.mkdir(parents=True, exist_ok=True)
        self.model.eval()
        sampled = self._collect(self.pair_agent, self.pair_tasks(), s.samples, self.cfg.seed + 7919)
        pairs = build_pairs(sampled, s.max_pairs, s.rank)
        with (out_dir / "pairs.jsonl").open("w") as fh:
            for p in pairs:
                row = {"task_id": p.chosen.task_id, "p_hat": p.p_hat}
                fh.write(
                    json.dumps({**row, "chosen": p.chosen.turns[-1].action, "rejected": p.rejected.turns[-1].action})
                    + "\n"
                )
        rates = [g[0] for g in pass_rate_groups(sampled)]
        summary: dict[str, Any] = {
            "warmup_steps": self.step,
            "prompts": len(rates),
            "prompts_kept": sum(0 < p < 1 for p in rates),
            "pairs": len(pairs),
            "pass_rate": float(np.mean(rates)) if rates else 0.0,
            "eval_before": self.evaluate(),
        }
        summary["dpo"] = self.dpo(pairs, out_dir) if pairs else {}
        summary["eval_after"] = self.evaluate()
        from safetensors.torch import save_file

        save_file(
            {k: v.contiguous() for k, v in trainable_state(self.model).items()}, str(out_dir / "trainable.safetensors")
        )
        (out_dir / "summary.json").write_text(json.dumps(summary, indent=2))
        return summary

    def dpo(self, pairs: Sequence[Pair], out_dir: Any) -> dict[str, Any]:
        """Offline DPO against the frozen pi_K log-probs; one JSON line per optimizer step."""
        s: G2dSettings = self.settings  # type: ignore[assignment]
        flat = [ep for p in pairs for ep in (p.chosen, p.rejected)]
        self.model.eval()
        with torch.no_grad():
            ref = self.sequence_logprobs(flat).view(-1, 2)
        optimizer = torch.optim.AdamW(self.params, lr=s.lr or self.cfg.optim.lr, betas=self.cfg.optim.betas)
        rng = random.Random(f"{self.cfg.seed}:g2d:dpo")
        losses: list[float] = []
        by_epoch: list[list[float]] = []
        self.model.train()
        with (out_dir / "dpo.jsonl").open("w") as fh:
            for epoch in range(s.epochs):
                order = list(range(len(pairs)))
                rng.shuffle(order)
                by_epoch.append([])
                for start in range(0, len(order), s.pairs_per_step):
                    idx = order[start : start + s.pairs_per_step]
                    pol = self.sequence_logprobs([ep for i in idx for ep in (pairs[i].chosen, pairs[i].rejected)])
                    pol = pol.view(-1, 2)
                    loss, metrics = dpo_loss(pol[:, 0], pol[:, 1], ref[idx, 0], ref[idx, 1], s.beta)
                    loss.backward()
                    torch.nn.utils.clip_grad_norm_(self.params, self.cfg.optim.grad_clip)
                    optimizer.step()
                    optimizer.zero_grad(set_to_none=True)
                    losses.append(float(loss))
                    by_epoch[-1].append(float(loss))
                    fh.write(json.dumps({"epoch": epoch, "loss": float(loss), **metrics}) + "\n")
        means = [float(np.mean(e)) for e in by_epoch]
        return {"steps": float(len(losses)), "loss_first": losses[0], "loss_last": losses[-1], "epoch_loss": means}
