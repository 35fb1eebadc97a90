"""Config parsing of the populora command and the compute-matched baseline."""

from __future__ import annotations

import pytest
import yaml

from rlvr_gym.algorithms.populora.cli import population_config


def test_baseline_is_one_pair_without_evolution_and_matched_steps():
    raw = yaml.safe_load(open("configs/populora-tiny.yaml"))["population"]
    pop = population_config(raw, baseline=False)
    base = population_config(raw, baseline=True)
    assert (pop.teachers, pop.students, pop.evolve) == (2, 2, True)
    assert (base.teachers, base.students, base.evolve) == (1, 1, False)
    assert base.steps_per_generation == 2 * pop.steps_per_generation
    assert base.task_types == pop.task_types == ("deduction", "abduction", "induction")


def test_unknown_settings_are_refused():
    with pytest.raises(ValueError, match="unknown"):
        population_config({"teacher": 3}, baseline=False)
