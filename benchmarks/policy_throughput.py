"""Policy throughput: generated tokens/s of the HF policy at batch 1 vs 8, beside bare `model.generate` at batch 1
vs 8 (the baseline for the batching gain), and of the openai policy against a real llama.cpp server at concurrency
1 vs 8. All run the embedded SmolLM2 on the same prompts in the same run.

    python benchmarks/policy_throughput.py [--max-new-tokens 48] [--requests 8] [--skip-server]

The server needs scripts/setup_server.sh to have been run once. Episodes in a rollout arrive as concurrent single
requests, so the HF "batch 8" figure goes through the micro-batcher exactly as the rollout runner's calls do.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

from rlvr_gym import Generation, GenerationRequest, Message, SamplingParams

PROMPTS = [
    "Write a long story about a dragon who learns to cook.",
    "Explain in detail how a bicycle works.",
    "Describe your perfect day, hour by hour.",
    "Write a long poem about the sea and the moon.",
    "List many facts about the planet Mars and explain each.",
    "Tell me a detailed history of the printing press.",
    "Write a letter to a friend about a trip to the mountains.",
    "Explain step by step how to bake bread.",
]


def requests(n: int, max_new_tokens: int) -> list[GenerationRequest]:
    return [
        GenerationRequest(
            messages=[Message(role="user", content=PROMPTS[i % len(PROMPTS)])],
            sampling=SamplingParams(temperature=1.0, max_new_tokens=max_new_tokens, seed=i),
        )
        for i in range(n)
    ]


def tokens(gens: list[Generation]) -> int:
    return sum(g.usage.completion_tokens for g in gens)


async def one_by_one(policy, reqs: list[GenerationRequest]) -> list[Generation]:
    out = []
    for r in reqs:
        out.extend(await policy.generate([r]))
    return out


async def concurrent(policy, reqs: list[GenerationRequest]) -> list[Generation]:
    """One call per request, all at once: what the rollout runner does with concurrency = len(reqs)."""
    results = await asyncio.gather(*(policy.generate([r]) for r in reqs))
    return [g for part in results for g in part]


def measure(label: str, policy, reqs: list[GenerationRequest], runner) -> float:
    t0 = time.perf_counter()
    gens = asyncio.run(runner(policy, reqs))
    elapsed = time.perf_counter() - t0
    rate = tokens(gens) / elapsed
    print(f"  {label:<28} {tokens(gens):5d} tokens in {elapsed:7.2f}s = {rate:7.1f} tok/s")
    return rate


def bench_hf(n: int, max_new_tokens: int) -> dict[str, float]:
    from rlvr_gym.agents.hf import HFPolicy
    from rlvr_gym.agents.models import smollm2_path

    policy = HFPolicy.from_pretrained(smollm2_path(), max_batch_size=8)
    print(f"HF policy (SmolLM2-135M, bf16 autocast={policy.autocast}):")
    asyncio.run(one_by_one(policy, requests(1, 4)))  # warm-up
    reqs = requests(n, max_new_tokens)
    b1 = measure("batch 1 (sequential)", policy, reqs, one_by_one)
    b8 = measure("batch 8 (micro-batched)", policy, reqs, concurrent)
    sizes = policy.batcher.batch_sizes[-3:]
    print(f"  ratio batch8/batch1 = {b8 / b1:.2f}x  (last batch sizes {sizes})")
    return {"hf_batch1_tok_s": b1, "hf_batch8_tok_s": b8, "hf_ratio": b8 / b1}


def bench_bare_generate(n: int, max_new_tokens: int) -> dict[str, float]:
    """Bare transformers `generate` on the same prompts: batch 1 one by one, then batches of 8 (left padding).

    Tokens are counted up to each row's first end-of-sequence token, as the policy counts them, so a batch that
    keeps decoding finished rows pays for it here too.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from rlvr_gym.agents.models import smollm2_path
    from rlvr_gym.agents.templates import eos_token_ids

    path = smollm2_path()
    tok = AutoTokenizer.from_pretrained(path, padding_side="left")
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    eos = set(eos_token_ids(tok, model.generation_config))
    pad = tok.pad_token_id if tok.pad_token_id is not None else min(eos)
    texts = [
        tok.apply_chat_template(
            [{"role": "user", "content": PROMPTS[i % len(PROMPTS)]}], tokenize=False, add_generation_prompt=True
        )
        for i in range(n)
    ]

    def run(batch: list[str]) -> int:
        enc = tok(batch, return_tensors="pt", padding=True, add_special_tokens=False)
        with torch.inference_mode():
            out = model.generate(
                **enc,
                do_sample=True,
                temperature=1.0,
                max_new_tokens=max_new_tokens,
                pad_token_id=pad,
                eos_token_id=sorted(eos),
            )
        count = 0
        for row in out[:, enc["input_ids"].shape[1] :].tolist():
            count += next((i + 1 for i, t in enumerate(row) if t in eos), len(row))
        return count

    print("bare model.generate (SmolLM2-135M, float32):")
    torch.manual_seed(0)
    run(texts[:1])  # warm-up
    rates = {}
    for label, size in (("batch 1 (sequential)", 1), ("batch 8", 8)):
        t0 = time.perf_counter()
        count = sum(run(texts[i : i + size]) for i in range(0, n, size))
        elapsed = time.perf_counter() - t0
        rates[size] = count / elapsed
        print(f"  {label:<28} {count:5d} tokens in {elapsed:7.2f}s = {rates[size]:7.1f} tok/s")
    print(f"  ratio batch8/batch1 = {rates[8] / rates[1]:.2f}x")
    return {"bare_batch1_tok_s": rates[1], "bare_batch8_tok_s": rates[8], "bare_ratio": rates[8] / rates[1]}


def bench_openai(n: int, max_new_tokens: int) -> dict[str, float]:
    from rlvr_gym.agents.local_server import LlamaCppServer
    from rlvr_gym.agents.openai import OpenAIPolicy

    with LlamaCppServer() as server:
        print(f"openai policy -> llama.cpp server at {server.base_url}:")
        reqs = requests(n, max_new_tokens)
        p1 = OpenAIPolicy("smollm2", server.base_url, concurrency=1, timeout_s=600)
        p8 = OpenAIPolicy("smollm2", server.base_url, concurrency=8, timeout_s=600)
        asyncio.run(one_by_one(p1, requests(1, 4)))  # warm-up
        c1 = measure("concurrency 1", p1, reqs, concurrent)
        c8 = measure("concurrency 8", p8, reqs, concurrent)
    print(f"  ratio conc8/conc1 = {c8 / c1:.2f}x")
    return {"openai_conc1_tok_s": c1, "openai_conc8_tok_s": c8, "openai_ratio": c8 / c1}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-new-tokens", type=int, default=48)
    parser.add_argument("--requests", type=int, default=8)
    parser.add_argument("--skip-server", action="store_true", help="only the HF policy")
    args = parser.parse_args()
    result: dict[str, float | str | int] = {
        "benchmark": "policy_throughput",
        "requests": args.requests,
        "max_new_tokens": args.max_new_tokens,
    }
    result.update(bench_hf(args.requests, args.max_new_tokens))
    result.update(bench_bare_generate(args.requests, args.max_new_tokens))
    result["hf_gain_vs_bare_gain"] = result["hf_ratio"] / result["bare_ratio"]
    print(f"HF policy's batching gain / bare generate's gain = {result['hf_gain_vs_bare_gain']:.2f} (target >= 0.9)")
    if not args.skip_server:
        result.update(bench_openai(args.requests, args.max_new_tokens))
    print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in result.items()}))


if __name__ == "__main__":
    main()
