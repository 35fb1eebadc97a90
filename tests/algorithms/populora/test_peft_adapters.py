"""Operators on a real peft LoRA of the embedded SmolLM2: factors round-trip, rank kept, the model still runs."""

from __future__ import annotations

import pytest
import torch

peft = pytest.importorskip("peft")


@pytest.fixture(scope="module")
def population_model():
    from peft import LoraConfig, get_peft_model

    from rlvr_gym.algorithms.modeling import load_model

    model, tokenizer = load_model(None)
    config = LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], init_lora_weights="gaussian")
    model = get_peft_model(model, config, adapter_name="teacher0")
    model.add_adapter("student0", config)
    return model, tokenizer


def test_operators_on_real_adapters(population_model):
    from rlvr_gym.algorithms.populora.adapters import read_factors, write_factors
    from rlvr_gym.algorithms.populora.lowrank import products
    from rlvr_gym.algorithms.populora.operators import CROSSOVERS, MUTATIONS

    model, tokenizer = population_model
    gen = torch.Generator().manual_seed(0)
    teacher = read_factors(model, "teacher0")
    assert len(teacher) == 2 * model.get_base_model().config.num_hidden_layers
    teacher = {n: (a, torch.randn(b.shape, generator=gen) * 0.01) for n, (a, b) in teacher.items()}  # B != 0
    child = CROSSOVERS["X3"]([MUTATIONS["M1"](teacher, gen), teacher], gen)
    write_factors(model, "student0", child)
    back = read_factors(model, "student0")
    assert {n: a.shape for n, (a, _) in back.items()} == {n: a.shape for n, (a, _) in teacher.items()}
    for name, delta in products(back).items():
        torch.testing.assert_close(delta, products(child)[name], atol=1e-6, rtol=1e-5)
        assert torch.linalg.matrix_rank(delta) <= 4
    ids = tokenizer("def f(x):", return_tensors="pt").input_ids
    model.set_adapter("student0")
    with torch.no_grad():
        with_child = model(input_ids=ids).logits
        with model.disable_adapter():
            base = model(input_ids=ids).logits
    assert torch.isfinite(with_child).all() and not torch.allclose(with_child, base)
