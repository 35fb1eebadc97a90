"""PopuLoRA's SFT cold start: `configs/azr-sft.yaml` mixes both AZR roles' expert data, and every member of a
population built with `init_adapter` starts from the SFT run's LoRA factors (plus its own B noise).

Real export (the AZR envs' oracles), real `SFTTrainer` steps and a real peft population, on a tiny random Llama.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

pytest.importorskip("peft")

ROOT = Path(__file__).resolve().parents[3]
AZR_SFT = ROOT / "configs" / "azr-sft.yaml"


def _tiny_llama(tokenizer, seed: int):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    shape = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2)
    return LlamaForCausalLM(LlamaConfig(vocab_size=len(tokenizer), num_key_value_heads=2, **shape))


@pytest.fixture(scope="module")
def sft_run(tmp_path_factory):
    """Two SFT steps on 2 propose + 2 solve examples (the shipped config's two sources, shrunk)."""
    from transformers import AutoTokenizer

    from rlvr_gym.agents.models import smollm2_path
    from rlvr_gym.algorithms.sft import SFTTrainer, export_from_config, load_sft_config

    out = tmp_path_factory.mktemp("azr-sft")
    raw = load_sft_config(AZR_SFT).model_dump(mode="json")
    for i, source in enumerate(raw["data"]):
        source.update(num_tasks=2, eval_num_tasks=1, path=str(out / f"{i}.jsonl"), eval_path=str(out / f"{i}e.jsonl"))
    raw.update(
        run_dir=str(out / "run"),
        batch_size=2,
        epochs=1.0,
        max_seq_len=256,
        checkpoint_every=1,
        eval={"every": 100, "num_examples": 1, "max_new_tokens": 4},
    )
    raw["model"].update(lora={"r": 4, "alpha": 8, "target_modules": ["q_proj", "v_proj"]}, threads=1)
    cfg = load_sft_config(raw)
    counts = export_from_config(cfg)
    tokenizer = AutoTokenizer.from_pretrained(str(smollm2_path()))
    trainer = SFTTrainer(cfg, model=_tiny_llama(tokenizer, seed=0), tokenizer=tokenizer)
    result = trainer.run(resume=False)
    return {"cfg": cfg, "counts": counts, "trainer": trainer, "result": result, "tokenizer": tokenizer}


def test_sft_mixes_both_roles_and_judges_each_with_its_own_env(sft_run):
    trainer = sft_run["trainer"]
    assert [c["examples"] for c in sft_run["counts"]] == [2, 1, 2, 1]
    assert len(trainer.rows) == 4 and [len(h) for h in trainer.held] == [1, 1]
    assert all(check is not None for check in trainer._checks)
    assert sft_run["result"]["step"] == 2 and "eval/well_formed_rate" in sft_run["result"]


def test_azr_reply_checks_accept_the_oracles_and_refuse_prose():
    from rlvr_gym.registry import make

    propose, solve = make("rlvr/AZR-Propose-v0", num_inputs=4), make("rlvr/AZR-Solve-v0")
    for env in (propose, solve):
        assert not env.reply_well_formed("The answer is 42.")
    propose.reset(options={"task_index": 2})  # induction: an inputs block, not an input block
    solve.reset(options={"task_index": 0})
    assert propose.reply_well_formed(propose.task.reference_actions[0])
    assert solve.reply_well_formed(solve.task.reference_actions[0])
    assert not solve.reply_well_formed("```output\n1\n```\n```output\n2\n```")  # two answers are not one


def _population(model_source, tokenizer, **overrides):
    from peft import LoraConfig, get_peft_model

    from rlvr_gym.algorithms.populora.population import Population, PopulationConfig

    model = get_peft_model(
        _tiny_llama(tokenizer, seed=1), LoraConfig(r=4, target_modules=["q_proj", "v_proj"]), adapter_name="unused"
    )
    settings = dict(
        teachers=2,
        students=2,
        rank=4,
        alpha=8,
        task_types=("deduction",),
        held_per_type=0,
        init_adapter=str(model_source),
        init_b_std=1e-3,
    )
    return Population(model, tokenizer, PopulationConfig(**{**settings, **overrides}))


def test_every_member_starts_from_the_sft_factors_plus_its_own_noise(sft_run):
    from rlvr_gym.algorithms.populora.adapters import factors_from_run, read_factors

    run_dir = sft_run["cfg"].run_dir
    population = _population(run_dir, sft_run["tokenizer"])
    start = factors_from_run(population.model, run_dir, "teacher0")
    assert any(float(b.abs().sum()) > 0 for _, b in start.values())  # SFT moved B off peft's zero init
    members = {name: read_factors(population.model, name) for name in population.members}
    for name, factors in members.items():
        for layer, (a, b) in factors.items():
            assert torch.equal(a, start[layer][0]), (name, layer)
            assert 0 < float((b - start[layer][1]).abs().max()) < 1e-2, (name, layer)
    b0 = torch.cat([b.flatten() for _, b in members["teacher0"].values()])
    b1 = torch.cat([b.flatten() for _, b in members["teacher1"].values()])
    assert not torch.equal(b0, b1)  # distinct members: evolution has something to choose between


def test_a_cold_start_of_another_shape_is_refused(sft_run):
    with pytest.raises(ValueError, match="LoRA shapes"):
        _population(sft_run["cfg"].run_dir, sft_run["tokenizer"], rank=2, alpha=4)


def test_report_measures_how_far_each_member_moved_from_the_cold_start(sft_run, tmp_path):
    import json
    from dataclasses import asdict

    from rlvr_gym.algorithms.populora.adapters import read_factors, write_factors
    from rlvr_gym.algorithms.populora.report import moved_from_start

    run_dir = sft_run["cfg"].run_dir
    population = _population(run_dir, sft_run["tokenizer"])
    factors = read_factors(population.model, "student1")
    write_factors(population.model, "student1", {n: (a, b + 0.05) for n, (a, b) in factors.items()})
    population.save(tmp_path / "population.pt")
    (tmp_path / "settings.json").write_text(json.dumps(asdict(population.config)))
    (tmp_path / "log.jsonl").write_text("")
    moved = moved_from_start(tmp_path, run_dir)
    assert set(moved) == set(population.members)
    assert 0 < moved["teacher0"] < 0.05 < moved["student1"]  # B noise only vs. a member that was moved
