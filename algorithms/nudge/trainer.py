"""`NudgeTrainer` (`algorithm.name: nudge`): the ordinary `Trainer` with NudgeRL rollouts and a distillation term.

It fills two extension points of `Trainer` and nothing else:
- `collect_train_episodes`: each sampled problem becomes M x K rollout tasks (`allocation`), all played in one
  lock-step collection, then regrouped by problem (the advantage group; `estimator: nudge` reads the contexts);
- `extra_loss_rows` / `extra_loss`: the responses re-scored under the plain prompt (`distill`), back-propagated in
  the same optimizer step as their episode's surrogate rows, averaged over that step's rows as upstream does.
Evaluation (greedy, pass@1 / pass@k on plain prompts) is the trainer's own, so a GRPO run evaluates identically.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import torch

from rlvr_gym.agent import EpisodeContext
from rlvr_gym.algorithms.advantages import AdvantageOutput
from rlvr_gym.algorithms.batch import Batch, Row
from rlvr_gym.algorithms.train_config import TrainConfig
from rlvr_gym.algorithms.trainer import Trainer
from rlvr_gym.types import Episode, Message, Task, TaskView

from .allocation import META_KEY, allocate, rollout_tasks
from .config import NudgeSettings
from .contexts import ContextSource, make_context_source
from .distill import distill_loss, distill_rows


class NudgeTrainer(Trainer):
    settings_model = NudgeSettings

    @classmethod
    def settings_from(cls, cfg: TrainConfig) -> NudgeSettings:
        """NudgeRL settings; the estimator must be `nudge` and a problem's N = M x K must be `rollout.group_size`."""
        nudge = NudgeSettings.model_validate(cfg.algorithm.options())
        if cfg.estimator != "nudge":
            raise ValueError(f"algorithm nudge needs `estimator: nudge` (got {cfg.estimator!r})")
        if cfg.rollout.group_size != nudge.rollouts_per_problem:
            raise ValueError(
                f"rollout.group_size ({cfg.rollout.group_size}) must equal contexts_per_problem x "
                f"rollouts_per_context ({nudge.rollouts_per_problem}): the rollouts of one problem"
            )
        return nudge

    def __init__(self, cfg: TrainConfig, *, contexts: ContextSource | None = None, **trainer_kwargs: Any) -> None:
        super().__init__(cfg, **trainer_kwargs)
        self.nudge: NudgeSettings = self.settings  # type: ignore[assignment]
        self.contexts = contexts or make_context_source(self.nudge.context_source, **self.nudge.context_options)
        self._task_env: Any = None

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

    def collect_train_episodes(self, tasks: list[int], seed: int) -> list[Episode]:
        planned = self.nudge_tasks(tasks, seed)
        episodes = self._collect(self.agent, planned, 1, seed)
        for task, ep in zip(planned, episodes, strict=True):  # one episode per task, in plan order
            ep.group_id = f"{self.cfg.rollout.env}|task={task.metadata[META_KEY]['problem_id']}"
        return episodes

    # ---- distillation ----------------------------------------------------------------------------------------------
    def render_plain(self, messages: list[Message]) -> list[int]:
        """Prompt ids of `messages` exactly as the training agent renders a first turn (system prompt included)."""
        from rlvr_gym.agents.templates import encode_chat

        incoming = getattr(self.agent, "_incoming", None)
        if incoming is not None:
            messages = incoming(EpisodeContext(task=TaskView(id="plain", prompt=messages), seed=None), messages)
        return encode_chat(self.tokenizer, messages)

    def extra_loss_rows(self, episodes: Sequence[Episode], adv: AdvantageOutput) -> list[Row]:
        if self.nudge.distill_coef <= 0:
            return []
        return list(distill_rows(episodes, adv, self.render_plain, self.cfg.max_seq_len, self.nudge.distill_over))

    def extra_loss(
        self, logprobs: torch.Tensor, batch: Batch, normaliser: float
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        return distill_loss(logprobs, batch.mask, batch.advantages, self.nudge.distill_coef, normaliser)
