"""Population members as named peft LoRA adapters on one frozen base: read and write their factors.

Every adapted layer of a peft model holds one `lora_A[name]` [r, in] and `lora_B[name]` [out, r] per adapter, so
a population of teachers and students costs one base model plus 2r(in + out) numbers per layer and member.
Operators work on plain `Factors`; these two functions are the only bridge to the model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from .lowrank import Factors


def lora_layers(model: Any) -> dict[str, Any]:
    """Module name -> peft LoRA layer (modules owning `lora_A` / `lora_B` dicts)."""
    return {
        n: m
        for n, m in model.named_modules()
        if hasattr(m, "lora_A") and hasattr(m, "lora_B") and isinstance(m.lora_A, torch.nn.ModuleDict)
    }


def read_factors(model: Any, adapter: str) -> Factors:
    """Detached copies of one adapter's (A, B) per layer."""
    return {
        n: (m.lora_A[adapter].weight.detach().clone(), m.lora_B[adapter].weight.detach().clone())
        for n, m in lora_layers(model).items()
        if adapter in m.lora_A
    }


def write_factors(model: Any, adapter: str, factors: Factors) -> None:
    """Overwrite one adapter's factors in place (shapes must match: operators keep the rank)."""
    layers = lora_layers(model)
    with torch.no_grad():
        for name, (a, b) in factors.items():
            layer = layers[name]
            layer.lora_A[adapter].weight.copy_(a.to(layer.lora_A[adapter].weight.dtype))
            layer.lora_B[adapter].weight.copy_(b.to(layer.lora_B[adapter].weight.dtype))


def run_factors(source: str | Path) -> Factors:
    """(A, B) per layer of a single-adapter LoRA run (`rlvr-gym sft` / `train`: a run dir, checkpoint or file), keyed
    by module name as `read_factors` keys them."""
    from safetensors.torch import load_file

    from rlvr_gym.algorithms.checkpoint import trained_weights_file

    path = trained_weights_file(source)
    factors: dict[str, list[torch.Tensor]] = {}
    for name, value in load_file(str(path)).items():
        module, sep, rest = name.partition(".lora_")
        if not sep or not rest.startswith(("A.", "B.")):
            raise ValueError(f"{path}: {name} is not a LoRA factor (a full fine-tune cannot seed an adapter)")
        factors.setdefault(module, [torch.empty(0), torch.empty(0)])[rest[0] == "B"] = value
    return {module: (a, b) for module, (a, b) in factors.items()}


def factors_from_run(model: Any, source: str | Path, adapter: str) -> Factors:
    """`run_factors(source)`, checked to fit `adapter` of `model` (same layers, same shapes) so it can start from it."""
    factors = run_factors(source)
    layers = {n: m for n, m in lora_layers(model).items() if adapter in m.lora_A}
    if set(factors) != set(layers):
        raise ValueError(f"{source} adapts other layers than {adapter} ({len(factors)} vs {len(layers)})")
    for module, (a, b) in factors.items():
        want = (layers[module].lora_A[adapter].weight.shape, layers[module].lora_B[adapter].weight.shape)
        if (a.shape, b.shape) != want:
            raise ValueError(f"{source}: {module} has LoRA shapes {tuple(a.shape)}/{tuple(b.shape)}, want {want}")
    return factors


def add_members(model: Any, names: list[str], config: Any) -> None:
    """Add one adapter per name with the same LoRA config (peft initialises B = 0, so each starts as the base)."""
    for name in names:
        if name not in model.peft_config:
            model.add_adapter(name, config)
