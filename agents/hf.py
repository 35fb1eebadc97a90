"""HF transformers policy: batched async generation over a local causal LM (optionally with a LoRA adapter).

`HFPolicy` wraps a model and tokenizer. Concurrent `generate` calls (one per running episode) are micro-batched so
the rollout runner's concurrency turns into real batches. The model may be shared with a trainer: generation
always uses the current weights, runs under `torch.no_grad()` in eval mode and restores the previous mode after.

What each `Generation` holds:
- `prompt_token_ids`: the exact prompt (request ids as given, or the chat template / raw prompt tokenized);
- `token_ids`: every sampled token, including the EOS token that ended the turn, and including the tokens of a stop
  string (the model did produce them; only `text` is cut before the stop string);
- `logprobs`: for each sampled token, log-softmax of the *raw* model logits (temperature 1, no top-p), i.e. the
  behaviour log-probability under the model itself, which is what PPO/GRPO importance ratios need. With bf16
  autocast these come from bf16 logits (cast to float32 before the softmax).

Reproducibility: each request samples from its own `torch.Generator` seeded by `sampling.seed`, so the same seed,
prompt and weights give the same tokens whatever else is in the batch, up to floating-point differences between
batch shapes (left padding changes matmul shapes; in float32 such differences almost never flip a sampled token,
under bf16 autocast they sometimes do). Greedy (temperature 0) is deterministic in the same sense. Unseeded
requests draw fresh entropy and are not reproducible.

Importing this module is cheap: torch and transformers load inside functions.
"""

from __future__ import annotations

import contextlib
import os
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rlvr_gym import Agent, Generation, GenerationRequest, SamplingParams, Usage

from .batching import MicroBatcher
from .templates import eos_token_ids, request_prompt_ids

_DTYPES = ("auto", "bfloat16", "float32")


def cpu_supports_bf16() -> bool:
    """True when the CPU has native bf16 arithmetic (AVX512-BF16 or AMX), where bf16 autocast beats float32."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            flags = f.read()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


class HFPolicy:
    """A batched, async policy over a transformers causal LM (see the module docstring for output semantics)."""

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        max_batch_size: int = 8,
        batch_wait_s: float = 0.01,
        autocast: bool | None = None,
        num_threads: int | None = None,
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.autocast = _default_autocast(model) if autocast is None else autocast
        self.num_threads = num_threads or default_num_threads()
        self.pad_id = _pad_id(tokenizer)
        self.eos_ids = eos_token_ids(tokenizer, getattr(model, "generation_config", None))
        self.batcher: MicroBatcher[GenerationRequest, Generation] = MicroBatcher(
            self._generate_batch, max_batch_size=max_batch_size, wait_s=batch_wait_s
        )

    @classmethod
    def from_pretrained(
        cls,
        path: str | os.PathLike[str],
        *,
        adapter: str | os.PathLike[str] | None = None,
        dtype: str = "auto",
        max_batch_size: int = 8,
        device: str = "cpu",
        merge_adapter: bool = True,
        batch_wait_s: float = 0.01,
        num_threads: int | None = None,
    ) -> HFPolicy:
        """Load a local HF folder (never the hub), optionally with a peft LoRA adapter on top.

        dtype "auto" keeps float32 weights and uses bf16 autocast where the CPU has native bf16; "bfloat16" stores
        the weights in bf16; "float32" disables autocast. The adapter is merged into the weights by default
        (faster generation); pass merge_adapter=False to keep a PeftModel.
        """
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if dtype not in _DTYPES:
            raise ValueError(f"dtype must be one of {_DTYPES}, got {dtype!r}")
        path = Path(path)
        if not path.is_dir():
            raise FileNotFoundError(f"model folder not found: {path}")
        torch_dtype = torch.bfloat16 if dtype == "bfloat16" else torch.float32
        tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        with _quiet_progress():
            model = AutoModelForCausalLM.from_pretrained(str(path), dtype=torch_dtype, local_files_only=True)
        if adapter is not None:
            from peft import PeftModel

            model = PeftModel.from_pretrained(model, str(adapter), local_files_only=True)
            if merge_adapter:
                model = model.merge_and_unload()
        model.to(device)
        model.eval()
        autocast = None if dtype == "auto" else False
        return cls(
            model,
            tokenizer,
            max_batch_size=max_batch_size,
            autocast=autocast,
            batch_wait_s=batch_wait_s,
            num_threads=num_threads,
        )

    # ---- the Policy protocol -------------------------------------------------------------------------------------
    async def generate(self, requests: list[GenerationRequest]) -> list[Generation]:
        """Continue each request; concurrent callers share batches (up to max_batch_size)."""
        return await self.batcher.submit(requests)

    def generate_sync(self, requests: list[GenerationRequest]) -> list[Generation]:
        """Run exactly these requests as one batch, blocking (benchmarks, scripts)."""
        with self.batcher.lock:
            return self._generate_batch(list(requests))

    async def aclose(self) -> None:
        return None

    @property
    def lock(self) -> Any:
        """Hold this while changing weights (a train step) so no batch samples from half-updated parameters."""
        return self.batcher.lock

    # ---- internals -----------------------------------------------------------------------------------------------
    def prompt_ids(self, request: GenerationRequest) -> list[int]:
        return request_prompt_ids(self.tokenizer, request)

    def _generate_batch(self, requests: list[GenerationRequest]) -> list[Generation]:
        from .sampler import cut_at_stop, generate_rows

        start = time.perf_counter()
        rows = [_row(self.prompt_ids(r), r.sampling) for r in requests]
        with _torch_threads(self.num_threads):
            results = generate_rows(
                self.model,
                rows,
                pad_id=self.pad_id,
                eos_ids=self.eos_ids,
                decode=self._decode,
                autocast=self.autocast,
            )
        latency = time.perf_counter() - start
        out = []
        for row, request, result in zip(rows, requests, results, strict=True):
            ids = result.token_ids
            visible = ids[:-1] if ids and ids[-1] in self.eos_ids else ids
            text = self._decode(visible)
            if result.stopped_by_string:
                text = cut_at_stop(text, request.sampling.stop)
            out.append(
                Generation(
                    text=text,
                    token_ids=list(ids),
                    logprobs=list(result.logprobs) if request.sampling.logprobs else None,
                    prompt_token_ids=list(row.prompt_ids),
                    finish_reason=result.finish_reason,
                    usage=Usage(prompt_tokens=len(row.prompt_ids), completion_tokens=len(ids)),
                    latency_s=latency,
                )
            )
        return out

    def _decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=True)


def _row(prompt_ids: list[int], sampling: SamplingParams) -> Any:
    from .sampler import Row

    return Row(
        prompt_ids=prompt_ids,
        temperature=sampling.temperature,
        top_p=sampling.top_p,
        max_new_tokens=max(1, sampling.max_new_tokens),
        stop=list(sampling.stop),
        seed=sampling.seed,
    )


def default_num_threads() -> int:
    """Intra-op threads for generation: $RLVR_GYM_TORCH_THREADS, else half the cores (at least 1).

    Measured on a shared 2-core machine (load ~7): SmolLM2 batch 8 ran at 75 tok/s with 1 thread and 12 tok/s with
    2, because OpenMP threads spin-wait for cores other processes hold; small matmuls gain little from more threads.
    """
    value = os.environ.get("RLVR_GYM_TORCH_THREADS")
    if value:
        return max(1, int(value))
    return max(1, (os.cpu_count() or 2) // 2)


@contextlib.contextmanager
def _torch_threads(n: int) -> Iterator[None]:
    """Use n intra-op threads for this batch (in the calling thread), then restore the previous setting."""
    import torch

    previous = torch.get_num_threads()
    if n != previous:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        if n != previous:
            torch.set_num_threads(previous)


@contextlib.contextmanager
def _quiet_progress() -> Iterator[None]:
    """No "Loading weights" bar for a sub-second load of a local folder (it clutters CLI output)."""
    from transformers.utils import logging as hf_logging

    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()


def _default_autocast(model: Any) -> bool:
    """bf16 autocast only for float32 weights on a CPU with native bf16 (measured faster there)."""
    import torch

    param = next(model.parameters())
    return param.device.type == "cpu" and param.dtype == torch.float32 and cpu_supports_bf16()


def _pad_id(tokenizer: Any) -> int:
    for candidate in (tokenizer.pad_token_id, tokenizer.eos_token_id, 0):
        if candidate is not None:
            return int(candidate)
    return 0


# ---- agent factories (entry points `smollm2` and `hf`) -------------------------------------------------------------
_POLICY_ONLY = {"dtype", "device", "adapter", "merge_adapter", "batch_wait_s", "num_threads"}


def hf_agent(arg: str | None, **options: Any) -> Agent:
    """`hf:<path>[+<adapter>]`: a ChatAgent over a local HF folder (`smollm2` names the embedded model). A LoRA
    adapter folder alone (`hf:<run>/checkpoints/step-000030/adapter`) loads on the base model its config names."""
    if not arg:
        raise ValueError("hf agent needs a model folder: hf:<path> or hf:<path>+<adapter>")
    path, _, adapter = arg.partition("+")
    adapter = options.pop("adapter", None) or adapter or None
    if path == "smollm2":
        from .models import smollm2_path

        path = str(smollm2_path())
    elif not adapter and is_adapter_folder(Path(path)):
        path, adapter = str(adapter_base(Path(path))), path
    return _chat_agent(path, adapter, options)


def is_adapter_folder(path: Path) -> bool:
    """A peft adapter folder: an adapter config and no model config of its own."""
    return (path / "adapter_config.json").is_file() and not (path / "config.json").is_file()


def adapter_base(adapter: Path) -> Path:
    """The base model folder an adapter was trained on (its `base_model_name_or_path`). The embedded model's cached
    folder moves with the cache root, so a base of that name that is not where it was resolves to this machine's."""
    import json

    from .models import smollm2_path

    base = json.loads((adapter / "adapter_config.json").read_text()).get("base_model_name_or_path")
    if not base:
        raise ValueError(f"{adapter}: adapter_config.json names no base model; use hf:<base>+<adapter>")
    if Path(base).is_dir():
        return Path(base)
    embedded = smollm2_path()
    if Path(base).name == embedded.name:
        return embedded
    raise FileNotFoundError(f"{adapter}: its base model folder {base} does not exist here; use hf:<base>+<adapter>")


def smollm2_agent(arg: str | None, **options: Any) -> Agent:
    """`smollm2[:+<adapter>]`: the embedded SmolLM2-135M-Instruct (converted once from the bundled GGUF)."""
    from .models import smollm2_path

    adapter = options.pop("adapter", None) or (arg or "").lstrip("+") or None
    return _chat_agent(str(smollm2_path()), adapter, options)


def _chat_agent(path: str, adapter: str | None, options: dict[str, Any]) -> Agent:
    from .chat import ChatAgent, split_agent_options

    agent_opts, extra = split_agent_options(options)
    policy_opts = {k: extra.pop(k) for k in list(extra) if k in _POLICY_ONLY}
    for name in ("api_key_env", "timeout_s", "max_retries"):  # HTTP-only options the CLI may pass to any backend
        extra.pop(name, None)
    if extra:
        warnings.warn(f"hf agent: ignoring unknown options {sorted(extra)}", stacklevel=3)
    policy = HFPolicy.from_pretrained(
        path, adapter=adapter, max_batch_size=agent_opts.pop("concurrency", None) or 8, **policy_opts
    )
    return ChatAgent(policy, **agent_opts)
