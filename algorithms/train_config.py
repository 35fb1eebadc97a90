"""Training run configuration: pydantic models, loaded from YAML with `--set key=value` overrides.

Sampling settings are `rlvr_gym.types.SamplingParams` (the one definition): `rollout.sampling` and `eval.sampling`.
The flat keys older configs use (`rollout.temperature`, `eval.max_new_tokens`, ...) are still accepted and moved
into those sections on load. Evaluation plays held-out tasks: `eval.env_kwargs` (e.g. `{split: eval}`) is merged
over the rollout's env kwargs, so envs with splits evaluate on their eval split; envs without one are held out by
index (`eval.task_offset`).

Every estimator/loss combination a config names must change the update: one that cannot (an unknown estimator or
parameter, an estimator without the data or trainer it reads, an off-policy setting in an on-policy run) is an error
when the config loads (`check_combination`), not a silent no-op found after a run. What an estimator prescribes
(DAPO's dynamic sampling and overlong budget) is filled in here, so the run's config.yaml shows it.
"""

from __future__ import annotations

import inspect
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
    init_adapter: Path | None = None  # start from these LoRA weights: an SFT run dir, checkpoint or adapter folder


class DynamicSampling(_Strict):
    """DAPO dynamic sampling: collect more prompts until the step holds `prompts_per_step` groups of mixed reward."""

    max_tries: int = Field(4, ge=2)  # collections per step, the first included (1 would never refill)


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
    dynamic_sampling: DynamicSampling | None = None  # on by default for `estimator: dapo`
    # What the policy sees each turn: the whole conversation (`history`), or only the env's latest message
    # (`current`: for envs whose every observation is a self-contained prompt, as ALFWorld's ReBel style, §1.1).
    # Unset: `current` for ALFWorld's `prompt_style: rebel`, else `history`.
    context: Literal["history", "current"] | None = None

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
    max_gen_tokens: int | None = Field(None, ge=1)  # also stop once training generated this many tokens (budgets)
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

    @model_validator(mode="after")
    def _check_estimator(self) -> TrainConfig:
        """Fill in what the estimator prescribes, then refuse combinations that would not change the update."""
        prescribe(self)
        check_combination(self)
        return self

    @property
    def optimizer_steps_per_batch(self) -> int:
        return self.epochs * self.minibatches


# ---- estimator prescriptions and combinations that would not change the update -----------------------------------
OFF_POLICY_LOSS = ("clip_low", "clip_high", "veto_eps")  # act only once the policy has moved from the behaviour one


def estimator_parameters(name: str) -> set[str] | None:
    """Keyword parameters of estimator `name` (None: it takes any); an unknown name is a ValueError."""
    from .advantages import get_estimator

    try:
        fn = get_estimator(name)
    except KeyError as exc:
        raise ValueError(exc.args[0]) from None
    params = list(inspect.signature(fn).parameters.values())[1:]  # the first is the AdvantageInput
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    return {p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}


def default_context(env_kwargs: dict[str, Any]) -> Literal["history", "current"]:
    """ReBel's prompt style writes a self-contained prompt every turn (§1.1: no raw history): show only that."""
    return "current" if env_kwargs.get("prompt_style") == "rebel" else "history"


def prescribe(cfg: TrainConfig) -> None:
    """The prompt context an env's prompt style implies; DAPO: dynamic sampling unless the config sets it, and the
    overlong budget defaults to the generation budget."""
    if cfg.rollout.context is None:
        cfg.rollout.context = default_context(cfg.rollout.env_kwargs)
    if cfg.estimator != "dapo":
        return
    if "dynamic_sampling" not in cfg.rollout.model_fields_set:
        cfg.rollout.dynamic_sampling = DynamicSampling()
    params = cfg.estimator_params
    if params.get("overlong_buffer") and params.get("max_response_tokens") is None:
        if cfg.rollout.sampling.max_new_tokens is None:
            raise ValueError("dapo's overlong_buffer needs rollout.sampling.max_new_tokens (or max_response_tokens)")
        cfg.estimator_params = {**params, "max_response_tokens": cfg.rollout.sampling.max_new_tokens}


def check_combination(cfg: TrainConfig) -> None:
    """Raise ValueError, saying why, when the estimator or a loss setting cannot change this config's update."""
    accepted = estimator_parameters(cfg.estimator)
    unknown = sorted(set(cfg.estimator_params) - accepted) if accepted is not None else []
    if unknown:
        raise ValueError(f"estimator {cfg.estimator!r} takes no {unknown}; it takes {sorted(accepted or ())}")
    problem = _no_op(cfg) or _reply_budget_problem(cfg)
    if problem:
        raise ValueError(problem)


def _no_op(cfg: TrainConfig) -> str | None:
    name, params, loss = cfg.estimator, cfg.estimator_params, cfg.loss
    on_policy = cfg.optimizer_steps_per_batch == 1
    if name == "nudge" and cfg.algorithm.name != "nudge":
        return (
            "estimator nudge reads the hint allocation of `algorithm: {name: nudge}`; without it every rollout is plain"
        )
    if name == "dapo" and cfg.rollout.dynamic_sampling is None and not params.get("overlong_buffer"):
        return "dapo without dynamic sampling or an overlong_buffer updates exactly as grpo with dapo's loss settings"
    if name == "gigpo" and _single_turn(cfg):
        return "gigpo groups steps by the observation before them; on a single-turn env that is dr_grpo, scaled"
    if name == "lampo" and params.get("beta", 1.0) == 0:
        return "lampo with beta 0 is rloo: use estimator rloo"
    if name == "mu_grpo" and on_policy:
        return (
            "mu_grpo's veto and clip act only off-policy; with epochs x minibatches = 1 it is grpo: raise minibatches"
        )
    if name == "nfpo" and on_policy:
        return "nfpo's forward trace acts only off-policy; with epochs x minibatches = 1 it is vanilla PG: raise minibatches"
    if cfg.algorithm.name == "dgg" and cfg.epochs < 2:
        return "dgg guards only reused batches (epoch >= 2); with epochs = 1 it never acts: raise epochs"
    if name == "sage" and (cfg.model.lora is None or (not loss.log_kl and loss.kl_coef == 0)):
        return "sage's anchor needs reference log-probs: a LoRA model with loss.log_kl true (or kl_coef > 0)"
    explicit = [k for k in OFF_POLICY_LOSS if k in loss.model_fields_set and getattr(loss, k) != _LOSS_DEFAULTS[k]]
    if explicit and on_policy:
        return (
            f"loss {explicit} only act off-policy, and with epochs x minibatches = 1 every importance ratio is 1: "
            "raise minibatches (or epochs), or drop the setting"
        )
    if loss.kl_coef > 0 and cfg.model.lora is None:
        return "loss.kl_coef > 0 needs a LoRA model: the reference is the base model with the adapter disabled"
    if "kl_estimator" in loss.model_fields_set and loss.kl_coef == 0 and not loss.log_kl:
        return "loss.kl_estimator is unused with kl_coef 0 and log_kl false"
    return None


def _rollout_env(cfg: TrainConfig) -> Any:
    """The rollout env built here, or None when it cannot be (an env that only exists where the run happens: the
    trainer will say so)."""
    from rlvr_gym.registry import make

    try:
        return make(cfg.rollout.env, **cfg.rollout.env_kwargs)
    except Exception:
        return None


def _single_turn(cfg: TrainConfig) -> bool:
    """True when the rollout env plays one turn per episode (False when it cannot be built here)."""
    env = _rollout_env(cfg)
    return env is not None and getattr(env, "max_turns", 1) == 1


def reply_tokens(text: str, model_path: str | None) -> int:
    """Length of a reply in the policy's tokens, end-of-turn token included (what a sampling budget must hold)."""
    from transformers import AutoTokenizer

    if model_path is None:
        from rlvr_gym.agents.models import smollm2_path

        model_path = str(smollm2_path())
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    return len(tokenizer(text, add_special_tokens=False)["input_ids"]) + 1


def _reply_budget_problem(cfg: TrainConfig) -> str | None:
    """An env whose reply format has a minimum length (`minimal_reply`, e.g. ALFWorld's ReBel belief format)
    cannot score any reply when `max_new_tokens` is below it: every episode would be a format failure."""
    budgets = {"rollout": cfg.rollout.sampling.max_new_tokens, "eval": cfg.eval.sampling.max_new_tokens}
    if all(b is None for b in budgets.values()):
        return None
    env = _rollout_env(cfg)
    minimal = getattr(env, "minimal_reply", None)
    text = minimal() if callable(minimal) else None
    if not text:
        return None
    need = reply_tokens(text, cfg.model.path)
    short = {k: b for k, b in budgets.items() if b is not None and b < need}
    if not short:
        return None
    where = ", ".join(f"{k}.sampling.max_new_tokens = {b}" for k, b in short.items())
    return (
        f"{where} cannot hold one well-formed reply of {cfg.rollout.env} "
        f"(prompt_style {cfg.rollout.env_kwargs.get('prompt_style')!r}): the shortest one is {need} tokens "
        f"({text!r}), so no reply could parse; raise max_new_tokens (real replies are longer: see docs/alfworld.md)"
    )


_LOSS_DEFAULTS = {k: f.default for k, f in LossSettings.model_fields.items()}


def load_config(source: str | Path | dict[str, Any] | TrainConfig, overrides: list[str] | None = None) -> TrainConfig:
    if isinstance(source, TrainConfig):  # only what was set: defaults and estimator prescriptions are re-derived
        data = source.model_dump(mode="json", exclude_unset=True)
    elif isinstance(source, dict):
        data = dict(source)
    else:
        data = load_yaml(source)
    if overrides:
        data = apply_overrides(data, overrides)
    return TrainConfig.model_validate(data)
