"""HFPolicy over the real embedded SmolLM2: prompts, logprob semantics, seeding, stops, batching, shared weights."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest
import torch

from rlvr_gym import GenerationRequest, Message, SamplingParams

QUESTION = [Message(role="user", content="What is 2+3? Answer briefly.")]


def req(max_new_tokens=8, **sampling) -> GenerationRequest:
    return GenerationRequest(messages=QUESTION, sampling=SamplingParams(max_new_tokens=max_new_tokens, **sampling))


def test_import_is_cheap():
    code = "import sys, rlvr_gym.agents.hf, rlvr_gym.agents.chat, rlvr_gym.agents.openai, rlvr_gym.agents.vllm; " \
           "assert not {'torch', 'transformers', 'vllm'} & set(sys.modules)"
    subprocess.run([sys.executable, "-c", code], check=True)


async def test_greedy_chat_answer_is_a_real_forward_pass(hf_policy):
    (gen,) = await hf_policy.generate([req(max_new_tokens=24, temperature=0)])
    assert "5" in gen.text
    assert gen.finish_reason == "stop" and gen.token_ids[-1] in hf_policy.eos_ids  # EOS kept in token_ids
    assert len(gen.token_ids) == len(gen.logprobs) == gen.usage.completion_tokens
    assert gen.prompt_token_ids == hf_policy.prompt_ids(req())
    assert gen.usage.prompt_tokens == len(gen.prompt_token_ids)
    assert hf_policy.tokenizer.decode(gen.prompt_token_ids).endswith("<|im_start|>assistant\n")


async def test_prompt_forms_agree(hf_policy):
    ids = hf_policy.prompt_ids(req())
    text = hf_policy.tokenizer.decode(ids)
    by_ids, by_text = await hf_policy.generate([
        GenerationRequest(prompt_token_ids=ids, sampling=SamplingParams(max_new_tokens=6, temperature=0)),
        GenerationRequest(prompt=text, sampling=SamplingParams(max_new_tokens=6, temperature=0)),
    ])
    assert by_ids.prompt_token_ids == ids
    assert by_ids.token_ids == by_text.token_ids


def test_logprobs_are_raw_model_logprobs_of_sampled_tokens(hf_policy):
    """Recorded at temperature 1 whatever the sampling temperature: a teacher-forced forward pass must agree."""
    (gen,) = hf_policy.generate_sync([req(max_new_tokens=6, temperature=1.7, top_p=0.9, seed=1)])
    full = torch.tensor([gen.prompt_token_ids + gen.token_ids])
    with torch.no_grad():
        logits = hf_policy.model(input_ids=full).logits[0].float()
    n = len(gen.prompt_token_ids)
    expected = torch.log_softmax(logits[n - 1:-1], dim=-1).gather(1, torch.tensor(gen.token_ids)[:, None])[:, 0]
    assert torch.allclose(torch.tensor(gen.logprobs), expected, atol=2e-3)
    assert all(lp <= 0 for lp in gen.logprobs)


def test_seeded_rows_reproduce_regardless_of_batch(hf_policy):
    alone = hf_policy.generate_sync([req(max_new_tokens=4, seed=7)])[0]
    batch = hf_policy.generate_sync([
        GenerationRequest(messages=[Message(role="user", content="Tell me a long story about dragons.")],
                          sampling=SamplingParams(max_new_tokens=2, seed=1)),
        req(max_new_tokens=4, seed=7),
        req(max_new_tokens=4, seed=8),
        req(max_new_tokens=4, seed=9),
    ])
    assert batch[1].token_ids == alone.token_ids  # other rows, padding and batch size do not matter
    assert any(g.token_ids != alone.token_ids for g in batch[2:])  # the seed does


POEM = [Message(role="user", content="Write a long poem about the sea.")]


def test_max_new_tokens_and_stop_strings(hf_policy):
    greedy = SamplingParams(max_new_tokens=5, temperature=0)
    (long,) = hf_policy.generate_sync([GenerationRequest(messages=POEM, sampling=greedy)])
    assert long.finish_reason == "length" and len(long.token_ids) == 5
    words = long.text.split()
    assert len(words) >= 2
    stop = " " + words[1]
    stopped = greedy.model_copy(update={"stop": [stop]})
    (cut,) = hf_policy.generate_sync([GenerationRequest(messages=POEM, sampling=stopped)])
    assert cut.finish_reason == "stop"
    assert cut.text == long.text[: long.text.find(stop)]
    assert stop not in cut.text and len(cut.token_ids) <= 5


async def test_concurrent_calls_are_micro_batched(hf_policy):
    before = len(hf_policy.batcher.batch_sizes)
    gens = await asyncio.gather(*(hf_policy.generate([req(max_new_tokens=2, seed=i)]) for i in range(5)))
    assert all(len(g) == 1 and len(g[0].token_ids) >= 1 for g in gens)
    assert max(hf_policy.batcher.batch_sizes[before:]) >= 4


async def test_shared_training_model_uses_current_weights_and_keeps_mode(hf_policy):
    model = hf_policy.model
    target = 1234

    def push(module, args, output):
        output.logits[..., target] += 1e4  # a "weight update" visible only through the live model object
        return output

    model.train()
    handle = model.register_forward_hook(push)
    try:
        (gen,) = await hf_policy.generate([req(max_new_tokens=3, temperature=0)])
    finally:
        handle.remove()
        mode_after = model.training
        model.eval()
    assert gen.token_ids == [target] * 3
    assert mode_after is True  # train mode restored after generation
    assert torch.is_grad_enabled()


def test_lora_adapter_loads_on_top(smollm2_dir, tmp_path):
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    from rlvr_gym.agents.hf import HFPolicy, hf_agent

    base = AutoModelForCausalLM.from_pretrained(str(smollm2_dir))
    torch.manual_seed(0)
    lora = get_peft_model(base, LoraConfig(r=4, target_modules=["q_proj", "v_proj"], init_lora_weights=False))
    for name, p in lora.named_parameters():
        if "lora_B" in name:
            p.data.normal_(0, 0.5)
    lora.save_pretrained(str(tmp_path / "adapter"))
    ids = [1, 2, 3, 4]
    plain = HFPolicy.from_pretrained(smollm2_dir, dtype="float32")
    adapted = HFPolicy.from_pretrained(smollm2_dir, adapter=tmp_path / "adapter", dtype="float32")
    with torch.no_grad():
        a = plain.model(input_ids=torch.tensor([ids])).logits
        b = adapted.model(input_ids=torch.tensor([ids])).logits
    assert not torch.allclose(a, b, atol=1e-3)
    agent = hf_agent(f"{smollm2_dir}+{tmp_path / 'adapter'}", temperature=0.0, max_new_tokens=4, dtype="float32")
    with torch.no_grad():
        c = agent.policy.model(input_ids=torch.tensor([ids])).logits
    assert torch.allclose(b, c, atol=1e-4)
    # A trainer shares its (unmerged, training-mode) PeftModel with the policy: same greedy tokens as merged.
    shared = HFPolicy(lora, plain.tokenizer, autocast=False)
    lora.train()
    greedy = GenerationRequest(prompt_token_ids=ids, sampling=SamplingParams(max_new_tokens=4, temperature=0))
    assert shared.generate_sync([greedy])[0].token_ids == adapted.generate_sync([greedy])[0].token_ids
    assert lora.training


def test_bad_paths_fail_clearly(tmp_path):
    from rlvr_gym.agents.hf import HFPolicy

    with pytest.raises(FileNotFoundError):
        HFPolicy.from_pretrained(tmp_path / "missing")
    with pytest.raises(ValueError):
        HFPolicy.from_pretrained(tmp_path, dtype="float16")
