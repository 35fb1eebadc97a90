"""Our GRPO trainer vs TRL's GRPOTrainer on identical work, one after the other in one process.

Same model (embedded SmolLM2-135M-Instruct + LoRA r=16 on all projections), same prompts (single-digit addition
tasks of rlvr/MathArithmetic-v0 with the same system prompt and chat template), same reward function (the math
env's verifier, format 0.2 + correct 0.8), group size, completion length, clip range, optimizer and number of
steps; KL off (TRL's default beta=0) and one optimizer step per generation batch on both sides.

Reports steps/s over the timed steps (the first `--warmup` steps of each side are excluded) and the peak resident
memory of each phase above the process's memory at the start of that phase (sampled every 10 ms; freed heap is
returned to the OS with malloc_trim between phases). Run: python benchmarks/trainer_vs_trl.py [--steps 4]
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import gc
import json
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from typing import Any

import torch

SYSTEM = "You are a calculator. Reply with only the final answer in the form \\boxed{N}."
ENV = "rlvr/MathArithmetic-v0"
ENV_KWARGS = {"format_weight": 0.2, "correct_weight": 0.8}


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@contextlib.contextmanager
def peak_memory() -> Iterator[dict[str, int]]:
    """Peak RSS above the starting RSS while the block runs."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    out = {"start": rss_bytes(), "peak": rss_bytes()}
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            out["peak"] = max(out["peak"], rss_bytes())
            time.sleep(0.01)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield out
    finally:
        stop.set()
        thread.join()
        out["peak_delta"] = out["peak"] - out["start"]


def our_config(args: argparse.Namespace, run_dir: str) -> Any:
    from rlvr_gym.algorithms.train_config import load_config

    return load_config(
        {
            "run_dir": run_dir,
            "seed": args.seed,
            "steps": args.steps,
            "tensorboard": False,
            "progress": False,
            "model": {"lora": {"r": 16, "alpha": 32}, "threads": args.threads, "bf16_autocast": args.bf16},
            "rollout": {
                "env": ENV,
                "env_kwargs": ENV_KWARGS,
                "system_prompt": SYSTEM,
                "prompts_per_step": args.prompts,
                "group_size": args.group,
                "max_new_tokens": args.max_new_tokens,
                "temperature": 1.0,
            },
            "estimator": "grpo",
            "loss": {"clip_low": 0.2, "clip_high": 0.28, "aggregation": "token_mean", "log_kl": False},
            "optim": {"lr": 3e-4, "grad_clip": 1.0},
            "epochs": 1,
            "minibatches": 1,
            "micro_batch_tokens": args.micro_batch_tokens,
        }
    )


def run_ours(args: argparse.Namespace) -> dict[str, Any]:
    from rlvr_gym.algorithms.trainer import Trainer

    with tempfile.TemporaryDirectory() as tmp, peak_memory() as mem:
        trainer = Trainer(our_config(args, tmp))
        times, rewards, gen = [], [], []
        for _ in range(args.steps):
            t0 = time.perf_counter()
            record = trainer.train_step()
            times.append(time.perf_counter() - t0)
            rewards.append(record["reward_mean"])
            gen.append(record["time/rollout_s"])
        tasks = [trainer.train_tasks(s) for s in range(args.steps)]
        del trainer
    return {"step_times": times, "gen_times": gen, "rewards": rewards, "mem": mem, "tasks": tasks}


def run_trl(args: argparse.Namespace, tasks: list[list[int]]) -> dict[str, Any]:
    from datasets import Dataset
    from peft import LoraConfig
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    import rlvr_gym
    from rlvr_gym.agents.models import smollm2_path
    from rlvr_gym.algorithms.modeling import LORA_TARGETS

    env = rlvr_gym.make(ENV, **ENV_KWARGS)
    rows = []
    for step_tasks in tasks:  # the exact prompts our trainer used, in the same order
        for index in step_tasks:
            task = env.unwrapped.get_task(index)
            rows.append(
                {
                    "prompt": [
                        {"role": "system", "content": SYSTEM},
                        {"role": "user", "content": task.prompt_messages()[0].text()},
                    ],
                    "task_index": index,
                }
            )
    dataset = Dataset.from_list(rows)

    def reward(prompts: list[Any], completions: list[Any], task_index: list[int], **_: Any) -> list[float]:
        out = []
        for completion, index in zip(completions, task_index, strict=True):
            text = completion[0]["content"] if isinstance(completion, list) else completion
            out.append(env.unwrapped.score_answer(env.unwrapped.get_task(index), text).reward)
        return out

    class Timer(TrainerCallback):
        def __init__(self) -> None:
            self.times: list[float] = []
            self._t = 0.0

        def on_step_begin(self, *a: Any, **k: Any) -> None:
            self._t = time.perf_counter()

        def on_step_end(self, *a: Any, **k: Any) -> None:
            self.times.append(time.perf_counter() - self._t)

    with tempfile.TemporaryDirectory() as tmp, peak_memory() as mem:
        path = str(smollm2_path())
        tokenizer = AutoTokenizer.from_pretrained(path)
        model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
        cfg = GRPOConfig(
            output_dir=tmp,
            use_cpu=True,
            bf16=args.bf16,  # fp32 by default on both sides: bf16 autocast on a CPU without bf16 units is slow
            seed=args.seed,
            max_steps=args.steps,
            per_device_train_batch_size=args.prompts * args.group,
            gradient_accumulation_steps=1,
            num_generations=args.group,
            max_completion_length=args.max_new_tokens,
            temperature=1.0,
            top_p=1.0,
            learning_rate=3e-4,
            lr_scheduler_type="constant",
            warmup_steps=0,
            weight_decay=0.0,
            max_grad_norm=1.0,
            beta=0.0,
            num_iterations=1,
            epsilon=0.2,
            epsilon_high=0.28,
            loss_type="dapo",
            scale_rewards="group",
            shuffle_dataset=False,
            logging_steps=1,
            save_strategy="no",
            report_to="none",
            disable_tqdm=True,
            dataloader_num_workers=0,
            log_completions=False,
            gradient_checkpointing=args.trl_gc == "on",
        )
        peft = LoraConfig(r=16, lora_alpha=32, lora_dropout=0.0, target_modules=LORA_TARGETS, task_type="CAUSAL_LM")
        timer = Timer()
        trainer = GRPOTrainer(
            model=model,
            reward_funcs=reward,
            args=cfg,
            train_dataset=dataset,
            processing_class=tokenizer,
            peft_config=peft,
            callbacks=[timer],
        )
        gen_times: list[float] = []
        generate = trainer._generate_single_turn  # time TRL's generation to show where the step time goes

        def timed_generate(*a: Any, **k: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return generate(*a, **k)
            finally:
                gen_times.append(time.perf_counter() - t0)

        trainer._generate_single_turn = timed_generate
        trainer.train()
        rewards = [h["reward"] for h in trainer.state.log_history if "reward" in h]
        del trainer, model
    return {"step_times": timer.times, "gen_times": gen_times, "rewards": rewards, "mem": mem}


def steps_per_s(times: list[float], warmup: int) -> float:
    timed = times[warmup:] or times
    return len(timed) / sum(timed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--prompts", type=int, default=4)
    parser.add_argument("--group", type=int, default=8)
    parser.add_argument("--max-new-tokens", type=int, default=24)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--micro-batch-tokens",
        type=int,
        default=1024,
        help="our padded tokens per forward/backward (activation memory vs. speed)",
    )
    parser.add_argument(
        "--bf16",
        action="store_true",
        help="bf16 autocast on both sides (default fp32 on both; only faster on CPUs with bf16 units)",
    )
    parser.add_argument(
        "--trl-gc",
        choices=["on", "off"],
        default="on",
        help="TRL's gradient checkpointing (on = GRPOConfig's default; ours never checkpoints)",
    )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    load = os.getloadavg()[0]

    ours = run_ours(args)  # ours first: heap the first phase leaves mapped can only shrink the second phase's delta
    trl = run_trl(args, ours["tasks"])
    ours_sps, trl_sps = steps_per_s(ours["step_times"], args.warmup), steps_per_s(trl["step_times"], args.warmup)
    ours_mb, trl_mb = ours["mem"]["peak_delta"] / 2**20, trl["mem"]["peak_delta"] / 2**20
    print(
        f"setup: {args.prompts} prompts x {args.group} samples, <= {args.max_new_tokens} new tokens, "
        f"{args.steps} steps ({args.warmup} warm-up), {args.threads} threads, {'bf16' if args.bf16 else 'fp32'}, "
        f"TRL gradient checkpointing {args.trl_gc}, "
        f"load avg at start {load:.1f}"
    )
    for name, res, sps, mb in (("ours", ours, ours_sps, ours_mb), ("trl ", trl, trl_sps, trl_mb)):
        print(
            f"{name}: {sps:.4f} steps/s  step times {[round(t, 1) for t in res['step_times']]} s "
            f"(generation {[round(t, 1) for t in res['gen_times']]} s)  peak mem +{mb:.0f} MiB  "
            f"rewards {[round(r, 3) for r in res['rewards']]}"
        )
    print(f"ratio ours/trl: steps/s x{ours_sps / trl_sps:.2f}, peak memory x{ours_mb / max(trl_mb, 1e-9):.2f}")
    print(
        json.dumps(
            {
                "benchmark": "trainer_vs_trl",
                "ours_steps_per_s": ours_sps,
                "trl_steps_per_s": trl_sps,
                "speed_ratio": ours_sps / trl_sps,
                "ours_peak_mib": ours_mb,
                "trl_peak_mib": trl_mb,
                "memory_ratio": ours_mb / max(trl_mb, 1e-9),
                "steps": args.steps,
                "warmup": args.warmup,
                "threads": args.threads,
                "trl_gradient_checkpointing": args.trl_gc,
                "dtype": "bf16" if args.bf16 else "fp32",
                "load_avg": load,
            }
        )
    )


if __name__ == "__main__":
    main()
