"""Multi-turn policy-gradient trainer: rollouts -> advantage estimator -> clipped-surrogate updates (LoRA or full).

One step: sample `prompts_per_step` training tasks, collect `group_size` episodes of each with the rollout runner
(the policy generates with the *current* in-memory weights, so there is no weight sync), compute advantages with a
registered estimator, turn episodes into token rows (no re-tokenisation; env tokens masked), then `epochs` passes of
`minibatches` optimizer steps each, with gradient accumulation over micro-batches. Importance ratios use the stored
behaviour log-probs (or recomputed ones). Every step's randomness is seeded from (seed, step), so a resumed run
reproduces the metrics of an uninterrupted one. With `rollout.dynamic_sampling` (DAPO) a step keeps drawing prompts
until `prompts_per_step` groups have mixed rewards (`collect_step`); `max_gen_tokens` ends a run at a budget of
generated tokens, so methods that spend rollouts differently can be compared at equal cost.

Methods that change one part of a step subclass `Trainer` and override an extension point instead of copying the
loop: `collect_train_episodes` (how a step's rollouts are made and grouped), `extra_loss_rows` + `extra_loss` (a
second loss term on rows of their own, trained in the same optimizer step as their episode), and `settings_model`
(the method's own config keys). `algorithm.name` in the config picks the class from the `rlvr_gym.trainers`
entry points (`trainer_class`), so `rlvr-gym train` runs any registered method.
"""

from __future__ import annotations

import argparse
import math
import random
import shutil
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch
from pydantic import BaseModel

from rlvr_gym.family import stable_seed
from rlvr_gym.rollout import collect_sync
from rlvr_gym.summary import wilson_interval
from rlvr_gym.types import Episode, SamplingParams

from .advantages import AdvantageInput, AdvantageOutput, compute_advantages
from .batch import Batch, Row, build_rows, collate, fill_mixed_groups, generated_tokens, micro_batches, scatter_to_rows
from .checkpoint import latest_checkpoint, load_adapter_weights, load_checkpoint, save_checkpoint
from .lockstep import LockstepPolicy
from .losses import LossConfig, policy_loss
from .metrics import MetricsWriter, hack_signature, read_metrics
from .modeling import apply_lora, is_peft, load_model, reference_policy, token_logprobs
from .train_config import ModelSettings, TrainConfig, load_config

AgentFactory = Callable[[Any, Any, SamplingParams, "TrainConfig"], Any]
TRAINERS = "rlvr_gym.trainers"  # entry-point group: algorithm name -> Trainer subclass


def default_agent_factory(model: Any, tokenizer: Any, sampling: SamplingParams, cfg: TrainConfig) -> Any:
    """A ChatAgent over an HFPolicy sharing the trainer's model object (generation sees every update), batched in
    lock-step so rollouts are exactly reproducible. With `rollout.context: current` the agent prompts with the
    env's latest message only (ReBel's context, `rebel.context.CurrentTurnAgent`)."""
    from rlvr_gym.agents.chat import ChatAgent
    from rlvr_gym.agents.hf import HFPolicy

    from .rebel.context import CurrentTurnAgent

    size = cfg.rollout.max_batch_size
    # Generation uses as many intra-op threads as training (cfg.model.threads, else torch's setting), not the
    # policy's eval default of half the cores: with 1 of 2 threads, generation was 1.4x slower than TRL's.
    threads = cfg.model.threads or torch.get_num_threads()
    policy = HFPolicy(model, tokenizer, max_batch_size=size, autocast=cfg.model.bf16_autocast, num_threads=threads)
    agent_class = CurrentTurnAgent if cfg.rollout.context == "current" else ChatAgent
    return agent_class(
        LockstepPolicy(policy, max_batch_size=size), system_prompt=cfg.rollout.system_prompt, sampling=sampling
    )


def build_policy(settings: ModelSettings, seed: int, model: Any = None, tokenizer: Any = None) -> tuple[Any, Any]:
    """What every trainer (RL, SFT) starts from: torch threads and seeds set, the base model (unless given) with its
    LoRA adapter, and the adapter's starting weights when `settings.init_adapter` names them."""
    if settings.threads:
        torch.set_num_threads(settings.threads)
    seed_everything(seed)
    if model is None:
        model, tokenizer = load_model(settings.path)
    if settings.lora is not None and not is_peft(model):
        lc = settings.lora
        model = apply_lora(model, r=lc.r, alpha=lc.alpha, dropout=lc.dropout, target_modules=lc.target_modules)
    if settings.init_adapter is not None:
        load_adapter_weights(model, settings.init_adapter)
    return model, tokenizer


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % (1 << 32))
    torch.manual_seed(seed)


class Trainer:
    """Holds model, optimizer and run state; `run()` trains to `cfg.steps`, resuming from the latest checkpoint."""

    settings_model: ClassVar[type[BaseModel] | None] = None  # a subclass's own keys under `algorithm:`

    @classmethod
    def settings_from(cls, cfg: TrainConfig) -> BaseModel | None:
        """This trainer's settings from `cfg.algorithm` (strict: a misspelt key is an error)."""
        options = cfg.algorithm.options()
        if cls.settings_model is None:
            if options:
                raise ValueError(f"algorithm {cfg.algorithm.name!r} takes no settings, got {sorted(options)}")
            return None
        return cls.settings_model.model_validate(options)

    def __init__(
        self, cfg: TrainConfig, *, model: Any = None, tokenizer: Any = None, agent_factory: AgentFactory | None = None
    ) -> None:
        self.cfg = cfg
        self.run_dir = Path(cfg.run_dir)
        self.model, self.tokenizer = model, tokenizer = build_policy(cfg.model, cfg.seed, model, tokenizer)
        self.params = [p for p in model.parameters() if p.requires_grad]
        o = cfg.optim
        self.optimizer = torch.optim.AdamW(self.params, lr=o.lr, betas=o.betas, weight_decay=o.weight_decay)
        self.step = 0
        self.gen_tokens_total = 0.0  # every token generated for training so far (the budget `max_gen_tokens` counts)
        self.last_step_tokens = 0.0
        self.estimator_state: dict[str, Any] = {}
        self.settings = self.settings_from(cfg)
        factory = agent_factory or default_agent_factory
        self.agent = factory(model, tokenizer, cfg.rollout.sampling, cfg)
        self.eval_agent = factory(model, tokenizer, cfg.eval.sampling, cfg)
        self.pad_id = int(getattr(tokenizer, "pad_token_id", None) or 0)
        if cfg.loss.kl_coef > 0 and not is_peft(model):
            raise ValueError("kl_coef > 0 needs a LoRA model (the reference is the base with the adapter disabled)")
        self.use_ref = is_peft(model) and (cfg.loss.kl_coef > 0 or cfg.loss.log_kl)

    # ---- tasks -----------------------------------------------------------------------------------------------------
    def train_tasks(self, step: int) -> list[int]:
        r = self.cfg.rollout
        rng = random.Random(f"{self.cfg.seed}:tasks:{step}")
        return [r.task_offset + i for i in rng.sample(range(r.task_pool), r.prompts_per_step)]

    def refill_tasks(self, attempt: int, n: int, drawn: set[int]) -> list[int]:
        """Dynamic sampling's draws: the step's usual tasks first, then `n` more not drawn yet this step."""
        if attempt == 0:
            return self.train_tasks(self.step)
        r = self.cfg.rollout
        rng = random.Random(f"{self.cfg.seed}:tasks:{self.step}:{attempt}")
        pool = rng.sample(range(r.task_pool), min(r.task_pool, n + len(drawn)))
        return [t for t in (r.task_offset + i for i in pool) if t not in drawn][:n]

    def collect_step(self, seed: int) -> tuple[list[Episode], dict[str, float]]:
        """The step's episodes and sampling metrics; with `rollout.dynamic_sampling` (DAPO), prompts are drawn until
        `prompts_per_step` groups have mixed rewards. Every try goes through `collect_train_episodes`."""
        ds = self.cfg.rollout.dynamic_sampling
        if ds is None:
            episodes = self.collect_train_episodes(self.train_tasks(self.step), seed)
            return episodes, {"sampling/gen_tokens": float(sum(generated_tokens(ep) for ep in episodes))}

        def collect(tasks: list[int], attempt: int) -> list[Episode]:
            return self.collect_train_episodes(
                tasks, seed if attempt == 0 else stable_seed(f"{seed}:refill:{attempt}", bits=31)
            )

        return fill_mixed_groups(self.refill_tasks, collect, self.cfg.rollout.prompts_per_step, ds.max_tries)

    def budget_spent(self) -> bool:
        """True when one more step (as large as the last) would end farther from `max_gen_tokens` than stopping now:
        runs end at the step boundary nearest the budget, so methods with larger steps (DAPO's refills) do not
        overshoot it more."""
        budget = self.cfg.max_gen_tokens
        return budget is not None and self.gen_tokens_total + self.last_step_tokens / 2 >= budget

    def eval_tasks(self) -> list[int]:
        e = self.cfg.eval
        return list(range(e.first_task, e.first_task + e.num_tasks))

    def eval_env_kwargs(self) -> dict[str, Any]:
        return {**self.cfg.rollout.env_kwargs, **self.cfg.eval.env_kwargs}

    def collect_train_episodes(self, tasks: list[int], seed: int) -> list[Episode]:
        """Extension point: the step's rollouts of the sampled task indices. Episodes sharing a `group_id` form one
        advantage group. Default: `group_size` samples of each task from the training agent."""
        return self._collect(self.agent, tasks, self.cfg.rollout.group_size, seed)

    def _collect(
        self, agent: Any, tasks: list[Any], group_size: int, seed: int, env_kwargs: dict[str, Any] | None = None
    ) -> list[Episode]:
        r = self.cfg.rollout
        policy = getattr(agent, "policy", None)
        concurrency, on_episode = r.concurrency, None
        if isinstance(policy, LockstepPolicy):  # every episode must be live at once for lock-step rounds
            concurrency = len(tasks) * group_size
            policy.begin(concurrency)
            on_episode = policy.on_episode
        return collect_sync(
            r.env,
            agent,
            tasks=tasks,
            group_size=group_size,
            concurrency=concurrency,
            seed=seed,
            env_kwargs=r.env_kwargs if env_kwargs is None else env_kwargs,
            step_timeout_s=r.step_timeout_s,
            episode_timeout_s=r.episode_timeout_s,
            on_episode=on_episode,
        )

    # ---- evaluation ------------------------------------------------------------------------------------------------
    def evaluate(self) -> dict[str, float]:
        """Mean reward / pass rate on the fixed held-out tasks (greedy by default, one sample each), and with
        `eval.pass_at_k` = k also pass@1 / pass@k from k samples per task at the rollout's sampling settings.
        `eval.num_tasks: 0` skips it (runs whose held-out games cost more than their training steps)."""
        if not self.cfg.eval.num_tasks:
            return {}
        t0 = time.perf_counter()
        kwargs = self.eval_env_kwargs()
        episodes = self._collect(self.eval_agent, self.eval_tasks(), 1, self.cfg.seed, kwargs)
        rewards = np.array([ep.reward for ep in episodes if ep.reward is not None] or [0.0])
        passed = sum(bool(ep.passed) for ep in episodes)
        low, high = wilson_interval(passed, len(episodes)) or [0.0, 1.0]
        out = {
            "eval/reward_mean": float(rewards.mean()),
            "eval/pass_rate": passed / max(len(episodes), 1),
            "eval/pass_rate_low": low,  # its 95% Wilson interval: is a change larger than the noise of the eval set?
            "eval/pass_rate_high": high,
            "eval/errors": float(sum(ep.error is not None for ep in episodes)),
            "eval/response_tokens": float(np.mean([generated_tokens(ep) for ep in episodes])),
        }
        k = self.cfg.eval.pass_at_k
        if k > 0:
            out.update(pass_at_k(self._collect(self.agent, self.eval_tasks(), k, self.cfg.seed + 1, kwargs), k))
        out["eval/time_s"] = time.perf_counter() - t0
        return out

    # ---- one update ------------------------------------------------------------------------------------------------
    def advantages(self, episodes: Sequence[Episode]) -> AdvantageOutput:
        inp = AdvantageInput.from_episodes(episodes, state=self.estimator_state)
        return compute_advantages(self.cfg.estimator, inp, **self.cfg.estimator_params)

    def episode_metrics(self, episodes: Sequence[Episode]) -> dict[str, float]:
        """Metrics of the step's episodes beyond reward: for ALFWorld's ReBel prompt style, the belief metrics of
        `rebel.metrics` whatever the estimator, so ReBel and its baselines are measured alike."""
        if self.cfg.rollout.env_kwargs.get("prompt_style") != "rebel" or not episodes:
            return {}
        from .rebel.metrics import belief_metrics

        return belief_metrics(list(episodes), [ep.group_id for ep in episodes])

    def extra_loss_rows(self, episodes: Sequence[Episode], adv: AdvantageOutput) -> list[Row]:
        """Extension point: rows scored by `extra_loss` instead of the surrogate (e.g. a distillation term). Each is
        trained in the first optimizer step of an epoch that holds a surrogate row of its episode (`Row.episode`).
        Default: none."""
        return []

    def extra_loss(
        self, logprobs: torch.Tensor, batch: Batch, normaliser: float
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """Extension point: the loss of one micro-batch of extra rows (`logprobs` [rows, T] on `batch.mask`), with
        `normaliser` = extra rows in this optimizer step. Returned metrics are sums over the micro-batch's rows; they
        are reported per extra row as `update/<key>`."""
        raise NotImplementedError(f"{type(self).__name__} returned extra rows but does not define extra_loss")

    def update(self, episodes: Sequence[Episode], adv: AdvantageOutput) -> dict[str, float]:
        cfg = self.cfg
        loss_cfg = cfg.loss.to_loss_config(cfg.max_seq_len, adv.loss_overrides)
        rows = build_rows(episodes, adv, cfg.max_seq_len)
        if not rows:
            return {"update/rows": 0.0}
        extra_by_episode: dict[int, list[Row]] = {}
        for row in self.extra_loss_rows(episodes, adv):
            extra_by_episode.setdefault(row.episode, []).append(row)
        self._fill_old_and_ref(rows)
        sums: dict[str, float] = {}
        extra_sums: dict[str, float] = {}
        grad_norms: list[float] = []
        rng = random.Random(f"{cfg.seed}:shuffle:{self.step}")
        self.model.train()
        for _ in range(cfg.epochs):
            order = list(rows)
            rng.shuffle(order)
            pending = dict(extra_by_episode)
            for mb in np.array_split(np.arange(len(order)), min(cfg.minibatches, len(order))):
                chosen = [order[i] for i in mb]
                extra = [x for e in sorted({r.episode for r in chosen}) for x in pending.pop(e, [])]
                grad_norms.append(self._optimizer_step(chosen, loss_cfg, sums, extra, extra_sums))
        tokens = max(sums.pop("tokens", 1.0), 1.0)
        out = {f"update/{k}": v / tokens for k, v in sums.items()}
        out.update(
            {
                "update/rows": float(len(rows)),
                "update/grad_norm": float(np.mean(grad_norms)),
                "update/optimizer_steps": float(len(grad_norms)),
                "update/tokens": tokens,
            }
        )
        if extra_by_episode:
            n_extra = max(extra_sums.pop("rows", 0.0), 1.0)
            out.update({f"update/{k}": v / n_extra for k, v in extra_sums.items()})
            out["update/extra_rows"] = float(sum(len(v) for v in extra_by_episode.values()))
        return out

    def _extra_backward(self, rows: list[Row], sums: dict[str, float]) -> None:
        """Accumulate the gradient of `extra_loss` over the optimizer step's extra rows."""
        fwd = {"autocast": self.cfg.model.bf16_autocast, "lm_head_fp32": self.cfg.model.lm_head_fp32}
        for micro in self._micro(rows):
            batch = collate(micro, self.pad_id, self.cfg.pad_to_multiple)
            loss, metrics = self.extra_loss(token_logprobs(self.model, batch, **fwd)[0], batch, float(len(rows)))
            loss.backward()
            sums["rows"] = sums.get("rows", 0.0) + len(micro)
            for key, value in metrics.items():
                sums[key] = sums.get(key, 0.0) + float(value)

    def _optimizer_step(
        self,
        rows: list[Row],
        loss_cfg: LossConfig,
        sums: dict[str, float],
        extra: Sequence[Row] = (),
        extra_sums: dict[str, float] | None = None,
    ) -> float:
        if extra:
            self._extra_backward(list(extra), extra_sums if extra_sums is not None else {})
        token_level = loss_cfg.aggregation == "token_mean"
        normaliser = float(sum(r.n_generated for r in rows)) if token_level else float(len(rows))
        for micro in self._micro(rows):
            batch = collate(micro, self.pad_id, self.cfg.pad_to_multiple)
            logp, ent = token_logprobs(
                self.model,
                batch,
                with_entropy=True,
                entropy_grad=loss_cfg.entropy_coef > 0,
                autocast=self.cfg.model.bf16_autocast,
                lm_head_fp32=self.cfg.model.lm_head_fp32,
            )
            loss, metrics = policy_loss(
                logp,
                batch.old_logprobs,
                batch.advantages,
                batch.mask,
                loss_cfg,
                ref_logprobs=batch.ref_logprobs,
                entropy=ent,
                normaliser=normaliser,
            )
            loss.backward()
            for key, value in metrics.items():
                sums[key] = sums.get(key, 0.0) + float(value)
        norm = torch.nn.utils.clip_grad_norm_(self.params, self.cfg.optim.grad_clip)
        self._set_lr()
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        return float(norm)

    def _set_lr(self) -> None:
        o = self.cfg.optim
        scale = min(1.0, (self.step + 1) / o.warmup_steps) if o.warmup_steps else 1.0
        for group in self.optimizer.param_groups:
            group["lr"] = o.lr * scale

    @torch.no_grad()
    def _fill_old_and_ref(self, rows: list[Row]) -> None:
        """Recompute old log-probs where asked or missing, and reference log-probs for the KL term/metric."""
        need_old = [
            r
            for r in rows
            if self.cfg.old_logprobs == "recompute"
            or any(math.isnan(x) for x, m in zip(r.old_logprobs, r.loss_mask, strict=True) if m)
        ]
        fwd = {"autocast": self.cfg.model.bf16_autocast, "lm_head_fp32": self.cfg.model.lm_head_fp32}
        self.model.eval()
        m = self.cfg.pad_to_multiple
        for micro in self._micro(need_old):
            scatter_to_rows(micro, token_logprobs(self.model, collate(micro, self.pad_id, m), **fwd)[0], "old_logprobs")
        if self.use_ref:
            with reference_policy(self.model) as ref:
                for micro in self._micro(rows):
                    scatter_to_rows(
                        micro, token_logprobs(ref, collate(micro, self.pad_id, m), **fwd)[0], "ref_logprobs"
                    )

    def _micro(self, rows: list[Row]) -> list[list[Row]]:
        return micro_batches(rows, self.cfg.micro_batch_tokens, pad_multiple=self.cfg.pad_to_multiple)

    # ---- the loop --------------------------------------------------------------------------------------------------
    def train_step(self) -> dict[str, float]:
        step_seed = stable_seed(f"{self.cfg.seed}:step:{self.step}", bits=31)
        seed_everything(step_seed)
        t0 = time.perf_counter()
        cfg = self.cfg
        collected, sampled = self.collect_step(step_seed)
        self.last_step_tokens = sampled["sampling/gen_tokens"]
        self.gen_tokens_total += self.last_step_tokens
        # Infrastructure errors carry no reward: learning from them as 0s would punish the policy for an outage.
        episodes = [ep for ep in collected if ep.error is None]
        n_errors = len(collected) - len(episodes)
        t_roll = time.perf_counter() - t0
        adv = self.advantages(episodes)
        t1 = time.perf_counter()
        upd = self.update(episodes, adv)
        t_upd = time.perf_counter() - t1
        gen_tokens = sum(generated_tokens(ep) for ep in episodes)
        self.step += 1
        record = {
            "step": self.step,
            "reward_mean": float(np.mean([ep.reward for ep in episodes])),
            "reward_std": float(np.std([ep.reward for ep in episodes])),
            "pass_rate": float(np.mean([ep.passed for ep in episodes])),
            "errors": float(n_errors),
            "response_tokens": gen_tokens / max(len(episodes), 1),
            **sampled,
            "gen_tokens_total": self.gen_tokens_total,
            **{f"adv/{k}": v for k, v in adv.metrics.items() if k not in ("reward_mean", "reward_std")},
            "acr": adv.metrics["acr"],
            **self.episode_metrics(episodes),
            **upd,
            "lr": self.optimizer.param_groups[0]["lr"],
            "time/rollout_s": t_roll,
            "time/update_s": t_upd,
            "time/step_s": time.perf_counter() - t0,
            "gen_tokens_per_s": sampled["sampling/gen_tokens"] / max(t_roll, 1e-9),
            "train_tokens_per_s": upd.get("update/tokens", 0.0) * cfg.epochs / max(t_upd, 1e-9),
        }
        for key in ("update/kl_ref", "update/entropy", "update/clip_frac"):
            if key in record:
                record[key.split("/", 1)[1]] = record[key]
        return record

    def save(self) -> Path:
        return save_checkpoint(
            self.run_dir,
            self.step,
            self.model,
            self.optimizer,
            {
                "estimator_state": self.estimator_state,
                "gen_tokens_total": self.gen_tokens_total,
                "last_step_tokens": self.last_step_tokens,
            },
            keep=self.cfg.keep_checkpoints,
        )

    def resume(self) -> bool:
        path = latest_checkpoint(self.run_dir)
        if path is None:
            return False
        state = load_checkpoint(path, self.model, self.optimizer)
        self.step = int(state["step"])
        self.gen_tokens_total = float(state.get("gen_tokens_total", 0.0))
        self.last_step_tokens = float(state.get("last_step_tokens", 0.0))
        self.estimator_state.clear()
        self.estimator_state.update(state.get("estimator_state", {}))
        return True

    def run(self, *, resume: bool = True, on_record: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
        cfg = self.cfg
        self.run_dir.mkdir(parents=True, exist_ok=True)
        if not resume:  # a fresh start must never be resumed into later from an older run's checkpoints
            shutil.rmtree(self.run_dir / "checkpoints", ignore_errors=True)
        resumed = resume and self.resume()
        (self.run_dir / "config.yaml").write_text(_yaml(cfg))
        writer = MetricsWriter(self.run_dir, tensorboard=cfg.tensorboard, resume_step=self.step if resumed else None)
        last_eval: dict[str, float] = {}
        try:
            with _progress(cfg.progress, cfg.steps, self.step) as advance:
                if not resumed:
                    last_eval = self.evaluate()
                    self._emit(writer, {"step": 0, **last_eval}, on_record)
                while self.step < cfg.steps and not self.budget_spent():
                    record = self.train_step()
                    last = self.step == cfg.steps or self.budget_spent()
                    if self.step % cfg.eval.every == 0 or last:
                        last_eval = self.evaluate()
                        record.update(last_eval)
                    self._emit(writer, record, on_record)
                    if self.step % cfg.checkpoint_every == 0 or last:
                        self.save()
                    advance(record)
        finally:
            writer.close()
        warning = hack_signature(read_metrics(writer.path))
        if warning:
            warnings.warn(f"{self.run_dir}: {warning}", stacklevel=2)
        return {
            "run_dir": str(self.run_dir),
            "step": self.step,
            **last_eval,
            **({"warning": warning} if warning else {}),
        }

    @staticmethod
    def _emit(writer: MetricsWriter, record: dict[str, Any], cb: Callable[[dict[str, Any]], None] | None) -> None:
        writer.write(record)
        if cb is not None:
            cb(record)


def pass_at_k(episodes: Sequence[Episode], k: int) -> dict[str, float]:
    """pass@1 (mean pass over a task's samples) and pass@k (any of its k samples passes), averaged over tasks; an
    errored sample counts as a fail."""
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


def trainer_class(name: str) -> type[Trainer]:
    """The `Trainer` subclass registered as `name` in the `rlvr_gym.trainers` entry points."""
    from rlvr_gym.plugins import load

    try:
        cls = load(TRAINERS, name)
    except KeyError as exc:
        raise ValueError(exc.args[0]) from None
    if not (isinstance(cls, type) and issubclass(cls, Trainer)):
        raise ValueError(f"{TRAINERS} entry {name!r} is not a Trainer subclass: {cls!r}")
    return cls


def _yaml(cfg: TrainConfig) -> str:
    import yaml

    return yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False)


class _progress:
    """A rich progress bar over steps showing the latest reward; a no-op when disabled."""

    def __init__(self, enabled: bool, total: int, done: int) -> None:
        self.enabled, self.total, self.done = enabled, total, done
        self._p: Any = None

    def __enter__(self) -> Callable[[dict[str, Any]], None]:
        if self.enabled:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._p = Progress(
                TextColumn("train"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("{task.fields[info]}"),
            )
            self._p.__enter__()
            self._task = self._p.add_task("train", total=self.total, completed=self.done, info="")
        return self.advance

    def advance(self, record: dict[str, Any]) -> None:
        if self._p is None:
            return
        info = f"reward {record['reward_mean']:.3f}  step {record['time/step_s']:.1f}s"
        if "eval/reward_mean" in record:
            info += f"  eval {record['eval/reward_mean']:.3f}"
        self._p.update(self._task, advance=1, info=info)

    def __exit__(self, *exc: Any) -> None:
        if self._p is not None:
            self._p.__exit__(*exc)


def train(
    config: str | Path | dict[str, Any] | TrainConfig,
    *,
    overrides: list[str] | None = None,
    resume: bool = True,
    **trainer_kwargs: Any,
) -> dict[str, Any]:
    """Train from a YAML path, a dict or a TrainConfig; resumes from the run dir's latest checkpoint by default."""
    cfg = load_config(config, overrides)
    return trainer_class(cfg.algorithm.name)(cfg, **trainer_kwargs).run(resume=resume)


def train_command(args: list[str]) -> int:
    """`rlvr-gym train <config.yaml> [--set key=value ...] [--fresh] [--steps N] [--run-dir DIR]`; the config's
    `algorithm.name` picks the trainer (GRPO-style policy gradient by default, `nudge`, ...)."""
    parser = argparse.ArgumentParser(prog="rlvr-gym train", description="RL-train a policy on an env (LoRA/full).")
    parser.add_argument("config", nargs="?", help="YAML train config (see configs/quickstart-math.yaml)")
    parser.add_argument("--config", dest="config_opt", metavar="CONFIG", help="the same, as an option")
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config field, dotted keys for nesting (e.g. --set rollout.group_size=8)",
    )
    parser.add_argument("--steps", type=int, help="shortcut for --set steps=N")
    parser.add_argument("--run-dir", help="shortcut for --set run_dir=DIR")
    parser.add_argument("--fresh", action="store_true", help="ignore existing checkpoints in the run dir")
    ns = parser.parse_args(args)
    if (ns.config is None) == (ns.config_opt is None):
        parser.error("give the config once, as CONFIG or --config CONFIG")
    overrides = list(ns.overrides)
    if ns.steps is not None:
        overrides.append(f"steps={ns.steps}")
    if ns.run_dir:
        overrides.append(f"run_dir={ns.run_dir}")
    result = train(ns.config or ns.config_opt, overrides=overrides, resume=not ns.fresh)
    from rich.console import Console

    Console().print({k: (round(v, 4) if isinstance(v, float) else v) for k, v in result.items()})
    return 0
