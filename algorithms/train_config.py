"""Training run configuration: pydantic models, loaded from YAML with `--set key=value` overrides."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from rlvr_gym.config import apply_overrides, load_yaml

from .losses import Aggregation, LossConfig
from .modeling import LORA_TARGETS


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


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
    temperature: float = 1.0
    top_p: float = 1.0
    max_new_tokens: int = 128
    system_prompt: str | None = None
    concurrency: int = 64
    max_batch_size: int = 64
    step_timeout_s: float | None = None
    episode_timeout_s: float | None = None


class EvalSettings(_Strict):
    num_tasks: int = 32
    task_offset: int = 1_000_000  # held out: disjoint from the training pool
    every: int = 10  # steps; also at step 0 and at the end
    temperature: float = 0.0
    max_new_tokens: int | None = None  # None = the rollout's


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


class TrainConfig(_Strict):
    """A whole run. `steps` optimisation steps, each on a fresh batch of rollouts (`epochs` passes over it)."""

    run_dir: Path = Path("runs/train/default")
    seed: int = 0
    steps: int = 20
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
