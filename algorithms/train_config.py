"""Training run configuration: pydantic models, loaded from YAML with `--set key=value` overrides.

Sampling settings are `rlvr_gym.types.SamplingParams` (the one definition): `rollout.sampling` and `eval.sampling`.
The flat keys older configs use (`rollout.temperature`, `eval.max_new_tokens`, ...) are still accepted and moved
into those sections on load. Evaluation plays held-out tasks: `eval.env_kwargs` (e.g. `{split: eval}`) is merged
over the rollout's env kwargs, so envs with splits evaluate on their eval split; envs without one are held out by
index (`eval.task_offset`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from rlvr_gym.config import apply_overrides, load_yaml
from rlvr_gym.types import SamplingParams

from .losses import Aggregation, LossConfig
from .modeling import LORA_TARGETS

SAMPLING_KEYS = tuple(SamplingParams.model_fields)
EVAL_INHERITS = ("max_new_tokens", "stop")  # eval sampling fields taken from the rollout's unless set
HELD_OUT_OFFSET = 1_000_000  # eval indices for envs without an eval split: disjoint from the training pool


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _nest_sampling(data: Any) -> Any:
    """Move flat sampling keys (`temperature: 1.0`) into `sampling:`; a flat `None` means "not set"."""
    if not isinstance(data, dict):
        return data
    flat = {k: data[k] for k in SAMPLING_KEYS if k in data}
    if not flat:
        return data
    rest = {k: v for k, v in data.items() if k not in flat}
    nested = dict(rest.get("sampling") or {})
    for key, value in flat.items():
        if key in nested and nested[key] != value:
            raise ValueError(f"{key!r} given both flat and under sampling:")
        if value is not None:
            nested[key] = value
    return {**rest, "sampling": nested}


class LoraSettings(_Strict):
    r: int = 16
    alpha: int = 32
    dropout: float = 0.0  # 0 keeps updates deterministic for exact resume
    target_modules: list[str] = Field(default_factory=lambda: list(LORA_TARGETS))


class ModelSettings(_Strict):
    path: str | None = None  # None = embedded SmolLM2-135M-Instruct
    lora: LoraSettings | None = Field(default_factory=LoraSettings)  # None = full fine-tuning
    bf16_autocast: bool = True
    lm_head_fp32: bool = True
    threads: int | None = None  # torch intra-op threads (None = leave torch's default)


class RolloutSettings(_Strict):
    env: str
    env_kwargs: dict[str, Any] = Field(default_factory=dict)
    prompts_per_step: int = 8
    group_size: int = 4
    task_pool: int = 100_000  # training task indices are drawn from [task_offset, task_offset + task_pool)
    task_offset: int = 0
    sampling: SamplingParams = Field(default_factory=lambda: SamplingParams(max_new_tokens=128))
    system_prompt: str | None = None
    concurrency: int = 64
    max_batch_size: int = 64
    step_timeout_s: float | None = None
    episode_timeout_s: float | None = None

    _flat_sampling = model_validator(mode="before")(_nest_sampling)


class EvalSettings(_Strict):
    num_tasks: int = 32
    env_kwargs: dict[str, Any] = Field(default_factory=dict)  # over rollout.env_kwargs, e.g. {split: eval}
    task_offset: int | None = None  # None: 0 when env_kwargs pick a split, else HELD_OUT_OFFSET
    every: int = 10  # steps; also at step 0 and at the end
    sampling: SamplingParams = Field(default_factory=lambda: SamplingParams(temperature=0.0))
    pass_at_k: int = Field(0, ge=0)  # also k samples per task at the rollout's sampling: eval/pass@1, eval/pass@k

    _flat_sampling = model_validator(mode="before")(_nest_sampling)

    @property
    def first_task(self) -> int:
        if self.task_offset is not None:
            return self.task_offset
        return 0 if "split" in self.env_kwargs else HELD_OUT_OFFSET


class LossSettings(_Strict):
    clip_low: float = 0.2
    clip_high: float = 0.28
    aggregation: Aggregation = "token_mean"
    kl_coef: float = 0.0
    kl_estimator: Literal["k1", "k3"] = "k3"
    log_kl: bool = True  # compute KL to the reference as a metric even when kl_coef = 0 (LoRA only)
    entropy_coef: float = 0.0
    veto_eps: float | None = None

    def to_loss_config(self, max_len: int, overrides: dict[str, Any]) -> LossConfig:
        """Defaults < the estimator's prescribed settings (DAPO, Mu-GRPO) < fields the user set explicitly."""
        known = LossConfig.__dataclass_fields__
        fields = {k: v for k, v in self.model_dump().items() if k in known}
        fields.update({k: v for k, v in overrides.items() if k in known})
        fields.update({k: getattr(self, k) for k in self.model_fields_set if k in known})
        return LossConfig(max_len=max_len, **fields)


class OptimSettings(_Strict):
    lr: float = 1e-4
    weight_decay: float = 0.0
    betas: tuple[float, float] = (0.9, 0.999)
    grad_clip: float = 1.0
    warmup_steps: int = 0


class AlgorithmSettings(BaseModel):
    """Which trainer runs (`name`, an `rlvr_gym.trainers` entry point) and its own settings (the other keys, checked
    by that trainer's `settings_model` when the config loads)."""

    model_config = ConfigDict(extra="allow")

    name: str = "policy_gradient"

    def options(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class TrainConfig(_Strict):
    """A whole run. `steps` optimisation steps, each on a fresh batch of rollouts (`epochs` passes over it)."""

    run_dir: Path = Path("runs/train/default")
    seed: int = 0
    steps: int = 20
    algorithm: AlgorithmSettings = Field(default_factory=AlgorithmSettings)
    model: ModelSettings = Field(default_factory=ModelSettings)
    rollout: RolloutSettings
    eval: EvalSettings = Field(default_factory=EvalSettings)
    estimator: str = "grpo"
    estimator_params: dict[str, Any] = Field(default_factory=dict)
    loss: LossSettings = Field(default_factory=LossSettings)
    optim: OptimSettings = Field(default_factory=OptimSettings)
    epochs: int = 1
    minibatches: int = 1  # optimizer steps per epoch (each minibatch is split into micro-batches)
    micro_batch_tokens: int = 2048  # padded tokens per forward/backward (gradient accumulation beyond that)
    max_seq_len: int = 1024
    pad_to_multiple: int = 32  # row length bucket: few distinct tensor shapes = kernels built once (big on CPU)
    old_logprobs: Literal["behaviour", "recompute"] = "behaviour"
    checkpoint_every: int = 5
    keep_checkpoints: int = 2
    tensorboard: bool = True
    progress: bool = True

    @model_validator(mode="before")
    @classmethod
    def _eval_inherits_rollout_sampling(cls, data: Any) -> Any:
        """Eval sampling fields not set in the config (max_new_tokens, stop) are the rollout's."""
        if not isinstance(data, dict) or not isinstance(data.get("rollout"), dict):
            return data
        try:
            rollout = RolloutSettings.model_validate(data["rollout"])
        except ValidationError:
            return data  # reported by the field validation that follows
        ev = _nest_sampling(dict(data.get("eval") or {}))
        given = dict(ev.get("sampling") or {})
        inherited = {k: getattr(rollout.sampling, k) for k in EVAL_INHERITS if k not in given}
        return {**data, "eval": {**ev, "sampling": {"temperature": 0.0, **inherited, **given}}}

    @model_validator(mode="after")
    def _check_algorithm(self) -> TrainConfig:
        """Unknown trainers and misspelt trainer settings fail at load time, not after the model has loaded."""
        from .trainer import trainer_class

        trainer_class(self.algorithm.name).settings_from(self)
        return self


def load_config(source: str | Path | dict[str, Any] | TrainConfig, overrides: list[str] | None = None) -> TrainConfig:
    if isinstance(source, TrainConfig):
        data = source.model_dump(mode="json")
    elif isinstance(source, dict):
        data = dict(source)
    else:
        data = load_yaml(source)
    if overrides:
        data = apply_overrides(data, overrides)
    return TrainConfig.model_validate(data)
