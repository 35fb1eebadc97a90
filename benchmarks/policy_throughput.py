"""Policy throughput: generated tokens/s of the HF policy at batch 1 vs 8, and of the openai policy against a real
llama.cpp server at concurrency 1 vs 8. Both run the embedded SmolLM2 on the same prompts in the same run.

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
    if not args.skip_server:
        result.update(bench_openai(args.requests, args.max_new_tokens))
    print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in result.items()}))


if __name__ == "__main__":
    main()
