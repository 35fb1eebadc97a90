"""Operators on real peft LoRA adapters of the embedded SmolLM2 that have trained: every operator moves delta W.

The adapters start as peft makes them (B = 0, so delta W = 0) and take two real REINFORCE steps each on a
contrasting batch (`policy.reinforce_update`); nothing here writes a factor by hand.
"""

from __future__ import annotations

import pytest
import torch

peft = pytest.importorskip("peft")

MEMBERS = ("teacher0", "student0")


@pytest.fixture(scope="module")
def trained():
    """SmolLM2 with two rank-4 adapters after two training steps each (different batches, so they differ)."""
    from peft import LoraConfig, get_peft_model

    from rlvr_gym.algorithms.modeling import load_model
    from rlvr_gym.algorithms.populora.adapters import read_factors
    from rlvr_gym.algorithms.populora.lowrank import products
    from rlvr_gym.algorithms.populora.policy import Sample, adapter_parameters, encode_chat, reinforce_update

    torch.manual_seed(0)
    torch.set_num_threads(1)
    model, tokenizer = load_model(None)
    config = LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], init_lora_weights="gaussian")
    model = get_peft_model(model, config, adapter_name=MEMBERS[0])
    model.add_adapter(MEMBERS[1], config)
    assert all(not torch.any(d) for d in products(read_factors(model, MEMBERS[0])).values())  # fresh: delta W = 0
    prompt = encode_chat(tokenizer, "Predict f(3) for def f(x): return x + 1")
    answers = ["```output\n4\n```", "It is five.", "```output\n5\n```"]
    for k, name in enumerate(MEMBERS):
        opt = torch.optim.Adam(adapter_parameters(model, name), lr=1e-3)
        rewards = [1.0, -1.0, -0.5] if k == 0 else [-0.5, 1.0, -1.0]
        batch = [
            Sample(name, "solve:deduction", prompt, tokenizer(a, return_tensors="pt").input_ids[0], r)
            for a, r in zip(answers, rewards, strict=True)
        ]
        for _ in range(2):
            assert reinforce_update(model, opt, name, batch)
    return model, tokenizer


def _distance(x, y) -> float:
    from rlvr_gym.algorithms.populora.lowrank import products

    px, py = products(x), products(y)
    return sum(float((px[n] - py[n]).double().pow(2).sum()) for n in px) ** 0.5


def test_training_moved_delta_w_and_every_operator_moves_it_again(trained):
    from rlvr_gym.algorithms.populora.adapters import read_factors
    from rlvr_gym.algorithms.populora.operators import CROSSOVERS, MUTATIONS
    from rlvr_gym.algorithms.populora.population import delta_norm

    model, _ = trained
    assert all(delta_norm(model, n) > 0 for n in MEMBERS)
    first, second = (read_factors(model, n) for n in MEMBERS)
    assert len(first) == 2 * model.get_base_model().config.num_hidden_layers
    assert _distance(first, second) > 0
    gen = torch.Generator().manual_seed(0)
    for name, mutation in MUTATIONS.items():
        assert _distance(mutation(first, gen), first) > 0, name
    for name, crossover in CROSSOVERS.items():
        if name == "clone":  # a copy by definition; replacement always mutates it afterwards
            continue
        child = crossover([first, second], gen, fitness=[0.2, 0.6])
        assert _distance(child, first) > 0 and _distance(child, second) > 0, name


def test_a_rewritten_adapter_round_trips_and_changes_the_model(trained):
    from rlvr_gym.algorithms.populora.adapters import read_factors, write_factors
    from rlvr_gym.algorithms.populora.lowrank import products
    from rlvr_gym.algorithms.populora.operators import CROSSOVERS, MUTATIONS

    model, tokenizer = trained
    gen = torch.Generator().manual_seed(1)
    first, second = (read_factors(model, n) for n in MEMBERS)
    child = CROSSOVERS["X3"]([MUTATIONS["M1"](first, gen), second], gen)
    ids = tokenizer("def f(x):", return_tensors="pt").input_ids
    model.set_adapter(MEMBERS[1])
    with torch.no_grad():
        before = model(input_ids=ids).logits
    write_factors(model, MEMBERS[1], child)
    back = read_factors(model, MEMBERS[1])
    assert {n: a.shape for n, (a, _) in back.items()} == {n: a.shape for n, (a, _) in first.items()}
    for name, delta in products(back).items():
        torch.testing.assert_close(delta, products(child)[name], atol=1e-6, rtol=1e-5)
        assert torch.linalg.matrix_rank(delta) <= 4
    with torch.no_grad():
        after = model(input_ids=ids).logits
    write_factors(model, MEMBERS[1], second)  # leave the shared fixture as it was
    assert torch.isfinite(after).all() and not torch.allclose(after, before)
