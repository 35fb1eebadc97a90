"""Supervised fine-tuning on expert trajectories: the cold start before RL (ReBel's SFT stage, docs/alfworld.md).

Data are what an env family already knows how to produce: `export_sft` plays each task's reference actions (the
oracle's plan, as `check-env` does) and records one example per turn, the prompt the policy would see in that turn
and the expert's reply. Envs that define `expert_replies(task)` turn plain reference actions into replies in their
own format (ALFWorld's ReBel style tags each step with belief and think text); the others reply with the reference
action itself. The prompt follows the same context rule as training (`train_config.default_context`): the whole
conversation so far, or only the env's latest message.

`sft` trains LoRA (or full) weights on those examples in the policy's chat template, with the loss on the reply's
tokens only (the end-of-turn token included), token-mean over each optimizer step. Runs checkpoint and resume like
`train` (`checkpoints/step-N`, `metrics.jsonl`), and a later `train` starts from the result with
`model.init_adapter: <sft run dir>`. The held-out evaluation reports the teacher-forced NLL on held examples and,
for envs that define `reply_well_formed`, the share of greedy replies that are well-formed (ReBel: belief, think and
action tags with a parseable belief), before training and every `eval.every` steps.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import time
from pathlib import Path
from typing import Any

import torch
from pydantic import BaseModel, ConfigDict, Field

from rlvr_gym.config import apply_overrides, load_yaml
from rlvr_gym.types import Message

from .batch import Row, collate, micro_batches
from .checkpoint import latest_checkpoint, load_checkpoint, save_checkpoint
from .metrics import MetricsWriter
from .modeling import token_logprobs
from .train_config import ModelSettings, OptimSettings, default_context


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ExportSettings(_Strict):
    """Which tasks the expert plays: env, its kwargs, and a range of task indices (train and held-out)."""

    env: str
    env_kwargs: dict[str, Any] = Field(default_factory=dict)
    num_tasks: int = 200
    task_offset: int = 0
    context: str | None = None  # None: the training default for these env kwargs
    path: Path  # the JSONL written by `export-sft` and read by `sft`
    eval_env_kwargs: dict[str, Any] = Field(default_factory=dict)  # over env_kwargs, e.g. {split: eval}
    eval_num_tasks: int = 8
    eval_path: Path | None = None  # held-out examples (None: no held-out evaluation)


class SFTEval(_Strict):
    every: int = 10  # steps; also before the first step and at the end
    num_examples: int = 8  # held-out examples generated from greedily (the first N of the eval file)
    max_new_tokens: int = 256


class SFTConfig(_Strict):
    run_dir: Path = Path("runs/sft/default")
    seed: int = 0
    data: ExportSettings | list[ExportSettings]  # a list mixes several envs' expert data (e.g. AZR's two roles)
    model: ModelSettings = Field(default_factory=ModelSettings)
    epochs: float = 3.0  # passes over the data (the reference's cold start: 3 epochs)
    batch_size: int = 8  # examples per optimizer step
    optim: OptimSettings = Field(default_factory=OptimSettings)
    max_seq_len: int = 2048
    micro_batch_tokens: int = 4096
    pad_to_multiple: int = 32
    eval: SFTEval = Field(default_factory=SFTEval)
    checkpoint_every: int = 10
    keep_checkpoints: int = 2

    @property
    def sources(self) -> list[ExportSettings]:
        """Every data source, in order (one for a single `data:` mapping)."""
        return self.data if isinstance(self.data, list) else [self.data]


def load_sft_config(source: str | Path | dict[str, Any], overrides: list[str] | None = None) -> SFTConfig:
    data = dict(source) if isinstance(source, dict) else load_yaml(source)
    if overrides:
        data = apply_overrides(data, overrides)
    return SFTConfig.model_validate(data)


# ---- export ----------------------------------------------------------------------------------------------------
def expert_examples(env: Any, task_index: int, context: str) -> list[dict[str, Any]]:
    """One example per turn of the expert playing task `task_index`: `{messages, reply}` plus ids. Raises when the
    expert does not win (bad data is refused, not trained on)."""
    env.reset(options={"task_index": task_index})
    task = env.task
    make_replies = getattr(env, "expert_replies", None)
    replies = list(make_replies(task) if callable(make_replies) else task.reference_actions or [])
    if not replies:
        raise ValueError(f"task {task.id} has no reference actions to export")
    observation, _ = env.reset(options={"task": task})
    conversation: list[Message] = []
    examples = []
    for turn, reply in enumerate(replies):
        incoming = [Message.model_validate(m) for m in observation]
        prompt = [*conversation, *incoming] if context == "history" else incoming
        examples.append(
            {
                "task_id": task.id,
                "task_index": task_index,
                "turn": turn,
                "messages": [m.model_dump(exclude_none=True) for m in prompt],
                "reply": reply,
            }
        )
        conversation = [*conversation, *incoming, Message(role="assistant", content=reply)]
        observation, reward, terminated, truncated, _ = env.step(reply)
        if terminated or truncated:
            break
    if not terminated or reward < getattr(env, "max_reward", 1.0):
        raise ValueError(f"the expert does not solve task {task.id} (reward {reward}): not exported")
    return examples


def export_sft(
    env_id: str, env_kwargs: dict[str, Any], task_indices: list[int], path: Path, context: str | None = None
) -> dict[str, Any]:
    """Write the expert examples of `task_indices` to `path` (JSONL); returns counts."""
    from rlvr_gym.registry import make

    context = context or default_context(env_kwargs)
    env = make(env_id, **env_kwargs)
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    try:
        with path.open("w", encoding="utf-8") as f:
            for index in task_indices:
                for example in expert_examples(env, index, context):
                    f.write(json.dumps(example) + "\n")
                    n += 1
    finally:
        env.close()
    return {"path": str(path), "tasks": len(task_indices), "examples": n, "context": context}


def export_from_config(cfg: SFTConfig) -> list[dict[str, Any]]:
    """Export each source's training examples and, when its `eval_path` is set, its held-out ones."""
    out = []
    for d in cfg.sources:
        indices = list(range(d.task_offset, d.task_offset + d.num_tasks))
        out.append(export_sft(d.env, d.env_kwargs, indices, d.path, d.context))
        if d.eval_path is not None:
            kwargs = {**d.env_kwargs, **d.eval_env_kwargs}
            out.append(export_sft(d.env, kwargs, list(range(d.eval_num_tasks)), d.eval_path, d.context))
    return out


def read_examples(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# ---- tokenisation ----------------------------------------------------------------------------------------------
def example_row(tokenizer: Any, example: dict[str, Any], max_len: int) -> Row:
    """Prompt in the chat template (generation prompt added) + reply + the template's end of turn; loss mask on
    the reply part only. Truncation keeps the end of the prompt, never the reply (a cut reply would teach cuts)."""
    from rlvr_gym.agents.templates import encode_chat, encode_text
    from rlvr_gym.agents.token_in_token_out import end_of_turn_suffix

    messages = [Message.model_validate(m) for m in example["messages"]]
    prompt = encode_chat(tokenizer, messages)
    reply = encode_text(tokenizer, example["reply"] + end_of_turn_suffix(tokenizer, messages))
    prompt = prompt[-max(1, max_len - len(reply)) :]
    row = Row()
    row.extend(prompt, generated=False)
    row.extend(reply, generated=True, logprobs=[0.0] * len(reply))
    return row


def nll_sums(model: Any, rows: list[Row], cfg: SFTConfig, normaliser: float, backward: bool) -> tuple[float, float]:
    """Summed reply-token NLL and token count over `rows` (backpropagating loss/normaliser when asked)."""
    total, tokens = 0.0, 0.0
    fwd = {"autocast": cfg.model.bf16_autocast, "lm_head_fp32": cfg.model.lm_head_fp32}
    for micro in micro_batches(rows, cfg.micro_batch_tokens, pad_multiple=cfg.pad_to_multiple):
        batch = collate(micro, 0, cfg.pad_to_multiple)
        logp = token_logprobs(model, batch, **fwd)[0]
        nll = -(logp * batch.mask).sum()
        if backward:
            (nll / normaliser).backward()
        total += float(nll.detach())
        tokens += float(batch.mask.sum())
    return total, tokens


# ---- held-out evaluation ---------------------------------------------------------------------------------------
def well_formed_rate(
    model: Any, tokenizer: Any, examples: list[dict[str, Any]], check: Any, max_new_tokens: int, threads: int | None
) -> tuple[float, list[str]]:
    """Share of greedy replies to the examples' prompts that `check` accepts, and the replies."""
    from rlvr_gym.agents.hf import HFPolicy
    from rlvr_gym.agents.templates import encode_chat
    from rlvr_gym.types import GenerationRequest, SamplingParams

    policy = HFPolicy(model, tokenizer, max_batch_size=len(examples) or 1, num_threads=threads)
    sampling = SamplingParams(temperature=0.0, max_new_tokens=max_new_tokens)
    requests = [
        GenerationRequest(
            prompt_token_ids=encode_chat(tokenizer, [Message.model_validate(m) for m in ex["messages"]]),
            sampling=sampling,
        )
        for ex in examples
    ]
    was_training = model.training
    model.eval()
    texts = [g.text for g in policy.generate_sync(requests)]
    model.train(was_training)
    return (sum(bool(check(t)) for t in texts) / max(len(texts), 1)), texts


class SFTTrainer:
    """Model, optimizer and data of one SFT run; `run()` trains to the end, resuming from the latest checkpoint."""

    def __init__(self, cfg: SFTConfig, *, model: Any = None, tokenizer: Any = None) -> None:
        from .trainer import build_policy

        self.cfg = cfg
        self.run_dir = Path(cfg.run_dir)
        self.model, self.tokenizer = model, tokenizer = build_policy(cfg.model, cfg.seed, model, tokenizer)
        self.params = [p for p in model.parameters() if p.requires_grad]
        o = cfg.optim
        self.optimizer = torch.optim.AdamW(self.params, lr=o.lr, betas=o.betas, weight_decay=o.weight_decay)
        missing = [str(d.path) for d in cfg.sources if not d.path.is_file()]
        if missing:
            raise FileNotFoundError(f"{missing}: no SFT data; run `rlvr-gym export-sft` with this config first")
        examples = [ex for d in cfg.sources for ex in read_examples(d.path)]
        self.rows = [example_row(tokenizer, ex, cfg.max_seq_len) for ex in examples]
        # held-out examples per source: the greedy check of a source's env judges that source's replies
        self.held = [read_examples(d.eval_path) if d.eval_path and d.eval_path.is_file() else [] for d in cfg.sources]
        self.held_rows = [example_row(tokenizer, ex, cfg.max_seq_len) for held in self.held for ex in held]
        self.steps_per_epoch = math.ceil(len(self.rows) / cfg.batch_size)
        self.total_steps = max(1, math.ceil(cfg.epochs * self.steps_per_epoch))
        self.step = 0
        self._checks = [self._reply_check(d) for d in cfg.sources]

    @staticmethod
    def _reply_check(source: ExportSettings) -> Any:
        from rlvr_gym.registry import make

        env = make(source.env, **source.env_kwargs)
        return getattr(env, "reply_well_formed", None)

    def step_rows(self, step: int) -> list[Row]:
        """The examples of optimizer step `step`: a seeded permutation per epoch, so a resumed run sees the same."""
        epoch, k = divmod(step, self.steps_per_epoch)
        order = list(range(len(self.rows)))
        random.Random(f"{self.cfg.seed}:sft:{epoch}").shuffle(order)
        b = self.cfg.batch_size
        return [self.rows[i] for i in order[k * b : (k + 1) * b]]

    def train_step(self) -> dict[str, float]:
        t0 = time.perf_counter()
        rows = self.step_rows(self.step)
        normaliser = float(sum(r.n_generated for r in rows))
        self.model.train()
        nll, tokens = nll_sums(self.model, rows, self.cfg, normaliser, backward=True)
        norm = torch.nn.utils.clip_grad_norm_(self.params, self.cfg.optim.grad_clip)
        o = self.cfg.optim
        lr = o.lr * (min(1.0, (self.step + 1) / o.warmup_steps) if o.warmup_steps else 1.0)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.step += 1
        return {
            "step": self.step,
            "sft/loss": nll / max(tokens, 1.0),
            "sft/tokens": tokens,
            "sft/examples": float(len(rows)),
            "sft/epoch": self.step / self.steps_per_epoch,
            "update/grad_norm": float(norm),
            "lr": lr,
            "time/step_s": time.perf_counter() - t0,
        }

    @torch.no_grad()
    def evaluate(self) -> dict[str, float]:
        """Held-out NLL of the expert replies and, where the env can judge replies, the greedy well-formed rate."""
        if not self.held_rows:
            return {}
        t0 = time.perf_counter()
        self.model.eval()
        nll, tokens = nll_sums(self.model, self.held_rows, self.cfg, 1.0, backward=False)
        out = {"eval/nll": nll / max(tokens, 1.0)}
        judged, formed, texts = 0, 0.0, []
        for held, check in zip(self.held, self._checks, strict=True):
            if check is None or self.cfg.eval.num_examples <= 0 or not held:
                continue
            held = held[: self.cfg.eval.num_examples]
            rate, replies = well_formed_rate(
                self.model, self.tokenizer, held, check, self.cfg.eval.max_new_tokens, self.cfg.model.threads
            )
            judged, formed, texts = judged + len(held), formed + rate * len(held), texts + replies
        if judged:
            out["eval/well_formed_rate"] = formed / judged
            self._write_samples(texts)
        out["eval/time_s"] = time.perf_counter() - t0
        return out

    def _write_samples(self, texts: list[str]) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)  # `evaluate()` may come before `run()`
        with (self.run_dir / "eval_samples.jsonl").open("a", encoding="utf-8") as f:
            f.write(json.dumps({"step": self.step, "replies": texts}) + "\n")

    def save(self) -> Path:
        return save_checkpoint(self.run_dir, self.step, self.model, self.optimizer, {}, keep=self.cfg.keep_checkpoints)

    def resume(self) -> bool:
        path = latest_checkpoint(self.run_dir)
        if path is None:
            return False
        self.step = int(load_checkpoint(path, self.model, self.optimizer)["step"])
        return True

    def run(self, *, resume: bool = True) -> dict[str, Any]:
        cfg = self.cfg
        self.run_dir.mkdir(parents=True, exist_ok=True)
        if not resume:
            shutil.rmtree(self.run_dir / "checkpoints", ignore_errors=True)
            (self.run_dir / "eval_samples.jsonl").unlink(missing_ok=True)
        resumed = resume and self.resume()
        import yaml

        (self.run_dir / "config.yaml").write_text(yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False))
        writer = MetricsWriter(self.run_dir, tensorboard=False, resume_step=self.step if resumed else None)
        last_eval: dict[str, float] = {}
        try:
            if not resumed:
                last_eval = self.evaluate()
                writer.write({"step": 0, **last_eval})
            while self.step < self.total_steps:
                record = self.train_step()
                last = self.step == self.total_steps
                if self.step % cfg.eval.every == 0 or last:
                    last_eval = self.evaluate()
                    record.update(last_eval)
                writer.write(record)
                if self.step % cfg.checkpoint_every == 0 or last:
                    self.save()
        finally:
            writer.close()
        return {"run_dir": str(self.run_dir), "step": self.step, **last_eval}


def sft(
    config: str | Path | dict[str, Any] | SFTConfig,
    *,
    overrides: list[str] | None = None,
    resume: bool = True,
    **kwargs: Any,
) -> dict[str, Any]:
    cfg = config if isinstance(config, SFTConfig) else load_sft_config(config, overrides)
    return SFTTrainer(cfg, **kwargs).run(resume=resume)


# ---- commands --------------------------------------------------------------------------------------------------
def _parser(prog: str, description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("config", help="YAML SFT config (see configs/rebel-alfworld-sft.yaml)")
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config field, dotted keys for nesting (e.g. --set epochs=1)",
    )
    return parser


def sft_command(args: list[str]) -> int:
    """`rlvr-gym sft <config.yaml> [--set key=value ...] [--fresh] [--export]`: supervised cold start (LoRA)."""
    parser = _parser("rlvr-gym sft", "Supervised fine-tuning on an env's expert trajectories (loss on replies).")
    parser.add_argument("--fresh", action="store_true", help="ignore existing checkpoints in the run dir")
    parser.add_argument("--export", action="store_true", help="(re)export the data first, as `export-sft` does")
    ns = parser.parse_args(args)
    cfg = load_sft_config(ns.config, ns.overrides)
    if ns.export or not all(d.path.is_file() for d in cfg.sources):
        export_from_config(cfg)
    result = sft(cfg, resume=not ns.fresh)
    print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in result.items()}))
    return 0


def export_command(args: list[str]) -> int:
    """`rlvr-gym export-sft <config.yaml>`: the env's expert trajectories as SFT examples (JSONL)."""
    parser = _parser("rlvr-gym export-sft", "Write an env's expert trajectories as SFT examples (prompt, reply).")
    ns = parser.parse_args(args)
    for result in export_from_config(load_sft_config(ns.config, ns.overrides)):
        print(json.dumps(result))
    return 0
