"""The sampling primitives: exact distribution, top-p support, greedy, seeded generators."""

from __future__ import annotations

import torch

from rlvr_gym.agents.sampler import cut_at_stop, make_generator, sample_token


def test_samples_follow_the_tempered_distribution():
    torch.manual_seed(0)
    logits = torch.randn(1000) * 2
    gen = make_generator(3)
    draws = torch.tensor([sample_token(logits, 0.7, 1.0, gen) for _ in range(6000)])
    freq = torch.bincount(draws, minlength=1000).float() / len(draws)
    probs = torch.softmax(logits / 0.7, dim=-1)
    top = probs.argsort(descending=True)[:3]
    assert torch.allclose(freq[top], probs[top], atol=0.02)


def test_top_p_support_and_greedy():
    logits = torch.tensor([3.0, 2.0, 1.0, -5.0, -6.0])
    gen = make_generator(0)
    probs = torch.softmax(logits, -1)
    assert probs[0] < 0.8 < probs[0] + probs[1]
    assert {sample_token(logits, 1.0, 0.8, gen) for _ in range(300)} == {0, 1}
    assert sample_token(logits, 0.0, 1.0, gen) == 0


def test_seeded_generators_repeat_and_unseeded_differ():
    logits = torch.zeros(50_000)
    a = [sample_token(logits, 1.0, 1.0, make_generator(9)) for _ in range(3)]
    assert len(set(a)) == 1
    assert len({sample_token(logits, 1.0, 1.0, make_generator(None)) for _ in range(5)}) > 1


def test_cut_at_stop():
    assert cut_at_stop("a b\nc END d", ["END", "\n"]) == "a b"
    assert cut_at_stop("abc", ["x"]) == "abc"
