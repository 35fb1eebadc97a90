"""Model loading, LoRA wrapping and the token log-prob forward used by the trainer.

The forward runs the decoder once and applies the LM head only at generated positions: on short completions after
long prompts that is most of the LM-head cost (vocab 49k x hidden) saved, the main trick behind our speed vs TRL.
The reference policy for KL is the same network with the LoRA adapter disabled, so it costs no second copy.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch

from .batch import Batch
from .losses import gather_logprobs

LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def load_model(path: str | Path | None, *, dtype: torch.dtype = torch.float32) -> tuple[Any, Any]:
    """Model + tokenizer from an HF folder; None = the embedded SmolLM2-135M-Instruct."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if path is None:
        from rlvr_gym.agents.models import smollm2_path

        path = smollm2_path()
    tokenizer = AutoTokenizer.from_pretrained(str(path))
    model = AutoModelForCausalLM.from_pretrained(str(path), dtype=dtype)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return model, tokenizer


def apply_lora(model: Any, *, r: int, alpha: int, dropout: float, target_modules: list[str]) -> Any:
    from peft import LoraConfig, get_peft_model

    names = {n.rsplit(".", 1)[-1] for n, _ in model.named_modules()}
    targets = [t for t in target_modules if t in names]
    if not targets:
        raise ValueError(f"none of the LoRA target modules {target_modules} exist in the model")
    cfg = LoraConfig(r=r, lora_alpha=alpha, lora_dropout=dropout, target_modules=targets, task_type="CAUSAL_LM")
    return get_peft_model(model, cfg)


def is_peft(model: Any) -> bool:
    return hasattr(model, "disable_adapter") and hasattr(model, "peft_config")


def _causal_lm(model: Any) -> Any:
    return model.get_base_model() if is_peft(model) else model


def token_logprobs(
    model: Any,
    batch: Batch,
    *,
    with_entropy: bool = False,
    entropy_grad: bool = False,
    autocast: bool = True,
    lm_head_fp32: bool = True,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Log-probs (and entropy) of `batch.targets` at masked positions; zeros elsewhere. Shapes [rows, T-1]."""
    lm = _causal_lm(model)
    sel = batch.mask > 0
    ctx = torch.autocast("cpu", dtype=torch.bfloat16) if autocast else contextlib.nullcontext()
    with ctx:
        hidden = lm.get_decoder()(input_ids=batch.input_ids, attention_mask=batch.attention_mask).last_hidden_state
    picked = hidden[:, :-1][sel]
    head = lm.get_output_embeddings()
    if lm_head_fp32:  # bf16 logits would put ~1e-2 noise on every log-prob and so on the importance ratios
        logits = torch.nn.functional.linear(
            picked.float(), head.weight.float(), None if head.bias is None else head.bias.float()
        )
    else:
        with ctx:
            logits = head(picked)
    lp, ent = gather_logprobs(logits, batch.targets[sel], with_entropy=with_entropy, entropy_grad=entropy_grad)
    out = torch.zeros(batch.mask.shape, dtype=torch.float32).masked_scatter(sel, lp)
    ent_out = None
    if ent is not None:
        ent_out = torch.zeros(batch.mask.shape, dtype=torch.float32).masked_scatter(sel, ent)
    return out, ent_out


@contextlib.contextmanager
def reference_policy(model: Any) -> Iterator[Any]:
    """The frozen reference: the base weights under a LoRA model (adapter disabled)."""
    if not is_peft(model):
        raise ValueError("a KL reference needs a LoRA model (full fine-tuning would need a second copy)")
    with model.disable_adapter():
        yield model


def trainable_state(model: Any) -> dict[str, torch.Tensor]:
    """The parameters the optimizer updates (LoRA factors, or everything), detached copies."""
    return {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}
