"""Checkpoints that resume exactly: trainable weights, optimizer, RNG states, step and estimator state.

Layout: `<run>/checkpoints/step-000010/{trainable.safetensors, optimizer.pt, rng.pt, state.json, adapter/, COMPLETE}`.
`COMPLETE` is written last, so a checkpoint interrupted mid-write is never picked up for resume.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .modeling import is_peft

MARKER = "COMPLETE"


def rng_state() -> dict[str, Any]:
    return {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}


def set_rng_state(state: dict[str, Any]) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])


def save_checkpoint(
    run_dir: Path, step: int, model: Any, optimizer: torch.optim.Optimizer, state: dict[str, Any], keep: int = 2
) -> Path:
    from safetensors.torch import save_file

    root = run_dir / "checkpoints"
    path = root / f"step-{step:06d}"
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    trainable = {n: p.detach().contiguous() for n, p in model.named_parameters() if p.requires_grad}
    save_file(trainable, str(path / "trainable.safetensors"))
    torch.save(optimizer.state_dict(), path / "optimizer.pt")
    torch.save(rng_state(), path / "rng.pt")
    (path / "state.json").write_text(json.dumps({"step": step, **state}, indent=1, default=float))
    if is_peft(model):
        model.save_pretrained(str(path / "adapter"))  # loadable with `hf:<base>+<adapter>` for eval
    (path / MARKER).write_text("ok\n")
    for old in list_checkpoints(run_dir)[:-keep] if keep > 0 else []:
        shutil.rmtree(old, ignore_errors=True)
    return path


def list_checkpoints(run_dir: Path) -> list[Path]:
    root = run_dir / "checkpoints"
    if not root.is_dir():
        return []
    return sorted(p for p in root.glob("step-*") if (p / MARKER).is_file())


def latest_checkpoint(run_dir: Path) -> Path | None:
    found = list_checkpoints(run_dir)
    return found[-1] if found else None


def trained_weights_file(source: str | Path) -> Path:
    """The file of trainable tensors that `source` names: a run dir (its latest checkpoint), a checkpoint folder
    or the file itself."""
    path = Path(source)
    if (path / "checkpoints").is_dir():
        found = latest_checkpoint(path)
        if found is None:
            raise ValueError(f"{path} holds no complete checkpoint to start from")
        path = found
    if path.is_dir():
        path = path / "trainable.safetensors"
    if not path.is_file():
        raise FileNotFoundError(f"no trained weights at {path}")
    return path


def load_adapter_weights(model: Any, source: str | Path) -> Path:
    """Copy trained weights into `model` (same LoRA shape) from a run dir (its latest checkpoint), a checkpoint
    folder or a file of trainable tensors: how a later run starts from an SFT cold start (`model.init_adapter`).
    Only the weights: the new run's optimizer, RNG and step start fresh. Returns the file read."""
    from safetensors.torch import load_file

    path = trained_weights_file(source)
    tensors = load_file(str(path))
    extra = sorted(n for n, p in model.named_parameters() if n in tensors and not p.requires_grad)
    extra += sorted(set(tensors) - dict(model.named_parameters()).keys())
    if extra:
        raise ValueError(f"{path} holds weights the model does not train, e.g. {extra[:3]}")
    _restore_trainable(model, tensors, path)
    return path


def _restore_trainable(model: Any, tensors: dict[str, torch.Tensor], path: Path) -> None:
    params = dict(model.named_parameters())
    missing = [n for n, p in params.items() if p.requires_grad and n not in tensors]
    if missing:
        raise ValueError(f"checkpoint {path} lacks trainable parameters, e.g. {missing[:3]}")
    with torch.no_grad():
        for name, value in tensors.items():
            params[name].copy_(value)


def load_checkpoint(path: Path, model: Any, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    """Restore weights, optimizer and RNG in place; returns the saved state dict (with `step`)."""
    from safetensors.torch import load_file

    _restore_trainable(model, load_file(str(path / "trainable.safetensors")), path)
    optimizer.load_state_dict(torch.load(path / "optimizer.pt", weights_only=False))
    set_rng_state(torch.load(path / "rng.pt", weights_only=False))
    return json.loads((path / "state.json").read_text())
