"""`rlvr-gym populora CONFIG [--baseline] [--run-dir DIR] [--generations N] [--set K=V]`: run a population, resumable.

The YAML holds `model` (an HF folder; null = the embedded SmolLM2-135M-Instruct), `run_dir`, `torch_threads` and
the `PopulationConfig` fields under `population`. Each generation appends one JSON line to `log.jsonl` and
rewrites `population.pt`; rerunning the command resumes from it. `settings.json` beside them holds the settings that
ran (after `--set` and `--baseline`), which `report.py` reads. `--baseline` is the paper's AZR baseline: one
agent (a single adapter) playing both roles, no evolution, the same steps per generation, so every arm makes the
same number of updates per adapter (PopuLoRA compares at matched per-adapter steps).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

import yaml

from .population import Population, PopulationConfig

SETTINGS = "settings.json"  # beside log.jsonl: the resolved population settings the report reads


def population_config(raw: dict[str, Any], *, baseline: bool) -> PopulationConfig:
    known = {f.name for f in fields(PopulationConfig)}
    unknown = set(raw) - known
    if unknown:
        raise ValueError(f"unknown population settings: {sorted(unknown)}")
    values = {k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()}
    config = PopulationConfig(**values)
    if baseline:
        config = PopulationConfig(**{**asdict(config), "teachers": 1, "students": 1, "shared": True, "evolve": False})
    return config


def build(config: PopulationConfig, model_path: str | None) -> Population:
    from peft import LoraConfig, get_peft_model

    from rlvr_gym.algorithms.modeling import load_model

    model, tokenizer = load_model(model_path)
    placeholder = LoraConfig(r=config.rank, lora_alpha=config.alpha, target_modules=list(config.target_modules))
    model = get_peft_model(model, placeholder, adapter_name="placeholder")
    return Population(model, tokenizer, config)


def run(
    config_path: str,
    *,
    baseline: bool = False,
    run_dir: str | None = None,
    generations: int | None = None,
    overrides: list[str] | None = None,
) -> list[dict[str, Any]]:
    import torch

    from rlvr_gym.config import apply_overrides

    raw = apply_overrides(yaml.safe_load(Path(config_path).read_text()) or {}, overrides or [])
    torch.set_num_threads(int(raw.get("torch_threads", 1)))
    config = population_config(raw.get("population", {}), baseline=baseline)
    out = Path(run_dir or raw.get("run_dir", "runs/populora")) / ("baseline" if baseline else "population")
    out.mkdir(parents=True, exist_ok=True)
    (out / SETTINGS).write_text(json.dumps(asdict(config), indent=1))  # what ran, overrides and --baseline included
    population = build(config, raw.get("model"))
    checkpoint = out / "population.pt"
    if checkpoint.exists():
        population.load(checkpoint)
    total = generations if generations is not None else config.generations
    while population.generation < total:
        log = population.run_generation()
        population.save(checkpoint)
        with (out / "log.jsonl").open("a") as fh:
            fh.write(json.dumps(asdict(log)) + "\n")
        print(json.dumps(asdict(log)), flush=True)
    return [asdict(x) for x in population.logs]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="rlvr-gym populora", description="PopuLoRA population self-play on AZR.")
    parser.add_argument("config", help="YAML (see configs/populora-tiny.yaml)")
    parser.add_argument(
        "--baseline",
        action="store_true",
        help="AZR's single agent (one adapter, both roles) at the same per-adapter steps",
    )
    parser.add_argument("--run-dir")
    parser.add_argument("--generations", type=int)
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config field, dotted keys (e.g. --set population.teachers=1)",
    )
    ns = parser.parse_args(argv)
    run(ns.config, baseline=ns.baseline, run_dir=ns.run_dir, generations=ns.generations, overrides=ns.overrides)
    return 0
