"""`NudgeTrainer`: the ordinary `Trainer` with NudgeRL rollouts, the `nudge` estimator and a distillation term.

It changes three steps of a train step and nothing else:
- collection: each sampled problem becomes M x K rollout tasks (`allocation`), all played in one lock-step
  collection, then regrouped by problem (the advantage group);
- the advantage is whatever `cfg.estimator` names (`nudge` for NudgeRL) - no override needed;
- each optimizer step also back-propagates the distillation term of the minibatch's hinted episodes before the
  surrogate's own backward/clip/step (`distill`).
With `nudge.enabled: false` it is plain GRPO (same code path) plus the pass@k evaluation both arms share.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np

from rlvr_gym.agent import EpisodeContext
from rlvr_gym.algorithms.advantages import AdvantageOutput
from rlvr_gym.algorithms.batch import Row, collate
from rlvr_gym.algorithms.losses import LossConfig
from rlvr_gym.algorithms.modeling import token_logprobs
from rlvr_gym.algorithms.train_config import TrainConfig
from rlvr_gym.algorithms.trainer import Trainer
from rlvr_gym.types import Episode, Message, Task, TaskView

from .allocation import allocate, rollout_tasks
from .config import NudgeSettings
from .contexts import ContextSource, make_context_source
from .distill import DistillRow, distill_loss, distill_rows


class NudgeTrainer(Trainer):
    def __init__(
        self,
        cfg: TrainConfig,
        nudge: NudgeSettings | None = None,
        *,
        contexts: ContextSource | None = None,
        **trainer_kwargs: Any,
    ) -> None:
        super().__init__(cfg, **trainer_kwargs)
        self.nudge = nudge or NudgeSettings(enabled=False)
        self.contexts = contexts or make_context_source(self.nudge.context_source, **self.nudge.context_options)
        self._task_env: Any = None
        self._allocating = False
        self._distill: dict[int, list[DistillRow]] = {}
        self._distill_sums: dict[str, float] = {}

    # ---- rollouts --------------------------------------------------------------------------------------------------
    def problem_task(self, index: int) -> Task:
        if self._task_env is None:
            from rlvr_gym.registry import make

            self._task_env = make(self.cfg.rollout.env, **self.cfg.rollout.env_kwargs)
        return self._task_env.get_task(index)

    def nudge_tasks(self, indices: Sequence[int], seed: int) -> list[Task]:
        """The M x K rollout tasks of every problem; the drop pattern is seeded by (step seed, task id)."""
        n = self.nudge
        out: list[Task] = []
        for index in indices:
            task = self.problem_task(int(index))
            hints = self.contexts.contexts(task, n.contexts_per_problem)
            slots = allocate(
                n.contexts_per_problem, n.rollouts_per_context, n.p_drop, random.Random(f"{seed}:nudge:{task.id}")
            )
            out.extend(rollout_tasks(task, hints, slots))
        return out

    def train_step(self) -> dict[str, float]:
        self._allocating = self.nudge.enabled
        try:
            return super().train_step()
        finally:
            self._allocating = False

    def _collect(self, agent: Any, tasks: list[Any], group_size: int, seed: int) -> list[Episode]:
        if not self._allocating or agent is not self.agent:
            return super()._collect(agent, tasks, group_size, seed)
        planned = self.nudge_tasks(tasks, seed)
        episodes = super()._collect(agent, planned, 1, seed)
        for task, ep in zip(planned, episodes, strict=True):  # one episode per task, in plan order
            ep.group_id = f"{self.cfg.rollout.env}|task={task.metadata['nudge']['problem_id']}"
        return episodes

    # ---- distillation ----------------------------------------------------------------------------------------------
    def render_plain(self, messages: list[Message]) -> list[int]:
        """Prompt ids of `messages` exactly as the training agent renders a first turn (system prompt included)."""
        from rlvr_gym.agents.templates import encode_chat

        incoming = getattr(self.agent, "_incoming", None)
        if incoming is not None:
            messages = incoming(EpisodeContext(task=TaskView(id="plain", prompt=messages), seed=None), messages)
        return encode_chat(self.tokenizer, messages)

    def update(self, episodes: Sequence[Episode], adv: AdvantageOutput) -> dict[str, float]:
        self._distill, self._distill_sums = {}, {}
        if self.nudge.enabled and self.nudge.distill_coef > 0:
            for row in distill_rows(episodes, adv, self.render_plain, self.cfg.max_seq_len):
                self._distill.setdefault(row.episode, []).append(row)
        out = super().update(episodes, adv)
        rows = max(self._distill_sums.pop("distill_rows", 0.0), 1.0)
        out.update({f"update/{k}": v / rows for k, v in self._distill_sums.items()})
        out["update/distill_rows"] = float(sum(len(v) for v in self._distill.values()))
        return out

    def _optimizer_step(self, rows: list[Row], loss_cfg: LossConfig, sums: dict[str, float]) -> float:
        extra = [d for e in sorted({r.episode for r in rows}) for d in self._distill.get(e, [])]
        if extra:
            fwd = {"autocast": self.cfg.model.bf16_autocast, "lm_head_fp32": self.cfg.model.lm_head_fp32}
            for micro in self._micro(list(extra)):
                batch = collate(micro, self.pad_id, self.cfg.pad_to_multiple)
                logp, _ = token_logprobs(self.model, batch, **fwd)
                loss, metrics = distill_loss(
                    logp, batch.mask, batch.advantages, self.nudge.distill_coef, float(len(extra))
                )
                loss.backward()
                for key, value in metrics.items():
                    self._distill_sums[key] = self._distill_sums.get(key, 0.0) + float(value)
        return super()._optimizer_step(rows, loss_cfg, sums)

    # ---- evaluation ------------------------------------------------------------------------------------------------
    def evaluate(self) -> dict[str, float]:
        """The trainer's greedy eval plus pass@1 / pass@k from k samples per held-out task (plain prompts)."""
        out = super().evaluate()
        k = self.nudge.pass_at_k
        if k > 0:
            episodes = self._collect(self.agent, self.eval_tasks(), k, self.cfg.seed + 1)
            out.update(pass_at_k(episodes, k))
        return out


def pass_at_k(episodes: Sequence[Episode], k: int) -> dict[str, float]:
    """pass@1 (mean pass over samples) and pass@k (a task passes if any of its k samples does), averaged over tasks;
    an errored sample counts as a fail."""
    by_task: dict[str, list[bool]] = {}
    for ep in episodes:
        by_task.setdefault(ep.group_id, []).append(bool(ep.passed) and ep.error is None)
    if not by_task:
        return {"eval/pass@1": 0.0, "eval/pass@k": 0.0, "eval/k": float(k)}
    return {
        "eval/pass@1": float(np.mean([np.mean(v) for v in by_task.values()])),
        "eval/pass@k": float(np.mean([any(v) for v in by_task.values()])),
        "eval/k": float(k),
    }


def nudge_train(
    config: Any, *, overrides: list[str] | None = None, resume: bool = True, **trainer_kwargs: Any
) -> dict[str, Any]:
    """Train from a NudgeRL YAML/dict (a train config plus a `nudge:` section)."""
    from .config import load_nudge_config

    cfg, nudge = load_nudge_config(config, overrides)
    return NudgeTrainer(cfg, nudge, **trainer_kwargs).run(resume=resume)
