"""Config parsing of the populora command, the AZR single-agent baseline and the recorded-run arms."""

from __future__ import annotations

import pytest
import yaml

from rlvr_gym.algorithms.populora.cli import population_config


def test_baseline_is_one_agent_for_both_roles_at_the_same_per_adapter_steps():
    raw = yaml.safe_load(open("configs/populora-tiny.yaml"))["population"]
    pop = population_config(raw, baseline=False)
    base = population_config(raw, baseline=True)
    assert (pop.teachers, pop.students, pop.evolve, pop.shared) == (2, 2, True, False)
    assert (base.teachers, base.students, base.evolve, base.shared) == (1, 1, False, True)
    assert base.steps_per_generation == pop.steps_per_generation
    assert base.task_types == pop.task_types == ("deduction", "abduction", "induction")


@pytest.mark.parametrize(
    ("name", "shape"),
    [
        ("populora-azr-single", (1, 1, True, False)),
        ("populora-1t1s", (1, 1, False, False)),
        ("populora-2t2s", (2, 2, False, True)),
    ],
)
def test_recorded_run_arms_differ_only_in_the_population(name, shape):
    """The three arms of docs/results/populora.md: same batches, steps and seed, so per-adapter steps match."""
    arms = {
        n: population_config(yaml.safe_load(open(f"configs/{n}.yaml"))["population"], baseline=False)
        for n in ("populora-azr-single", "populora-1t1s", "populora-2t2s")
    }
    config = arms[name]
    assert (config.teachers, config.students, config.shared, config.evolve) == shape
    shared = {
        "steps_per_generation",
        "generations",
        "proposals_per_type",
        "solves_per_type",
        "solver_samples",
        "seed",
        "lr",
        "max_new_tokens",
        "task_types",
        "rank",
    }
    for other in arms.values():
        assert {k: getattr(other, k) for k in shared} == {k: getattr(config, k) for k in shared}


def test_unknown_settings_are_refused():
    with pytest.raises(ValueError, match="unknown"):
        population_config({"teacher": 3}, baseline=False)


def test_cold_start_population_matches_the_sft_adapter_shape():
    """configs/populora-sft.yaml seeds every member from configs/azr-sft.yaml's run: same rank, alpha and layers."""
    population = yaml.safe_load(open("configs/populora-sft.yaml"))["population"]
    sft = yaml.safe_load(open("configs/azr-sft.yaml"))
    lora = sft["model"]["lora"]
    assert population["init_adapter"] == sft["run_dir"]
    assert (population["rank"], population["alpha"]) == (lora["r"], lora["alpha"])
    assert population["target_modules"] == lora["target_modules"]


def test_the_run_records_the_settings_that_ran(tmp_path):
    """`--set` overrides and `--baseline` land in settings.json, which the report reads (no generation run)."""
    import json

    from rlvr_gym.algorithms.populora.cli import run
    from rlvr_gym.algorithms.populora.report import load_arm

    overrides = ["population.init_adapter=null", "population.proposals_per_type=3"]
    run("configs/populora-sft.yaml", baseline=True, run_dir=str(tmp_path), generations=0, overrides=overrides)
    settings = json.loads((tmp_path / "baseline" / "settings.json").read_text())
    assert (settings["teachers"], settings["shared"], settings["evolve"]) == (1, True, False)
    assert settings["proposals_per_type"] == 3
    (tmp_path / "baseline" / "log.jsonl").write_text("")
    assert load_arm(str(tmp_path / "baseline"))[0].shared
