"""Population members as named peft LoRA adapters on one frozen base: read and write their factors.

Every adapted layer of a peft model holds one `lora_A[name]` [r, in] and `lora_B[name]` [out, r] per adapter, so
a population of teachers and students costs one base model plus 2r(in + out) numbers per layer and member.
Operators work on plain `Factors`; these two functions are the only bridge to the model.
"""

from __future__ import annotations

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


def add_members(model: Any, names: list[str], config: Any) -> None:
    """Add one adapter per name with the same LoRA config (peft initialises B = 0, so each starts as the base)."""
    for name in names:
        if name not in model.peft_config:
            model.add_adapter(name, config)
