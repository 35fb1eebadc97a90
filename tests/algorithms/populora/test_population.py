"""The generation loop on a tiny random Llama (real peft, real sandbox): AZR batches, teachers that train, resume."""

from __future__ import annotations

import numpy as np
import pytest
import torch

pytest.importorskip("peft")

P = 3  # proposals per (teacher, task type)


def _population(executor, seed=0, **overrides):
    from peft import LoraConfig, get_peft_model
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from rlvr_gym.agents.models import smollm2_path
    from rlvr_gym.algorithms.populora.population import Population, PopulationConfig

    tokenizer = AutoTokenizer.from_pretrained(str(smollm2_path()))
    torch.manual_seed(0)
    base = LlamaForCausalLM(
        LlamaConfig(
            vocab_size=len(tokenizer),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            num_key_value_heads=2,
        )
    )
    model = get_peft_model(base, LoraConfig(r=4, target_modules=["q_proj", "v_proj"]), adapter_name="unused")
    settings = dict(
        teachers=2,
        students=2,
        rank=4,
        alpha=8,
        task_types=("deduction",),
        max_new_tokens=6,
        proposals_per_type=P,
        solves_per_type=2,
        solver_samples=2,
        held_per_type=1,
        seed=seed,
        lr=1e-2,
    )
    population = Population(model, tokenizer, PopulationConfig(**{**settings, **overrides}), executor=executor)
    return population


@pytest.fixture(scope="module")
def executor():
    from rlvr_gym.envs.azr.execution import AZRExecutor
    from rlvr_gym.sandboxes import get_sandbox

    return AZRExecutor(get_sandbox("local"), workers=2)


def _scripted_teachers(population, monkeypatch):
    """Teachers answer with a fixed mix: a valid new program on every other prompt, prose on the rest (a test
    double for the sampler only; judging, solving, rewards and the update are the real ones)."""
    from rlvr_gym.envs.azr.tasks import proposal_text

    real = population._generate
    counter = iter(range(10_000))

    def scripted(member, prompts, **kw):
        if not member.startswith("teacher"):
            return real(member, prompts, **kw)
        out = []
        for _ in prompts:
            k = next(counter)
            text = (
                proposal_text("deduction", f"def f(x):\n    return x * {k + 3} + {k}", [(k,)])
                if k % 2 == 0
                else "I would propose something interesting."
            )
            ids = population.tokenizer(text, return_tensors="pt").input_ids[0]
            out.append((ids, text))
        return out

    monkeypatch.setattr(population, "_generate", scripted)


def test_teacher_batches_have_a_baseline_and_every_teacher_trains(executor, monkeypatch):
    from rlvr_gym.algorithms.populora.adapters import read_factors
    from rlvr_gym.algorithms.populora.policy import task_relative_advantages

    population = _population(executor)
    _scripted_teachers(population, monkeypatch)
    size = len(population.buffer)
    samples, records = population.step(1)
    for teacher in population.teachers:
        mine = [x for x in samples if x.member == teacher]
        assert [x.key for x in mine] == ["propose:deduction"] * P
        assert len({tuple(x.prompt_ids.tolist()) for x in mine}) == P  # one sample per prompt (AZR rollout.n = 1)
        rewards = sorted({x.reward for x in mine})
        assert -1.0 in rewards and len(rewards) > 1  # invalid prose -1, valid proposals -0.5 or learnability
        assert np.all(task_relative_advantages(mine) != 0)
    assert len(population.buffer) > size  # valid proposals joined the buffer
    assert any(a.teacher >= 0 for a in records["attempts"])  # and were solved by judges
    before = {n: read_factors(population.model, n) for n in population.members}
    stepped = population.update(samples)
    for teacher in population.teachers:
        assert stepped[teacher]
        after = read_factors(population.model, teacher)
        assert any(not torch.equal(before[teacher][n][1], after[n][1]) for n in after), teacher


def test_judges_are_the_other_pairs_students(executor, monkeypatch):
    population = _population(executor)
    _scripted_teachers(population, monkeypatch)
    _, records = population.step(2)
    judged = {(a.teacher, a.student) for a in records["attempts"] if a.teacher >= 0}
    assert judged and all(t != s for t, s in judged)


def test_single_agent_plays_both_roles_in_one_adapter(executor):
    population = _population(executor, teachers=1, students=1, shared=True, evolve=False)
    assert population.members == ["agent"]
    samples, _ = population.step(3)
    assert {x.member for x in samples} == {"agent"}
    assert {x.key.split(":")[0] for x in samples} == {"propose", "solve"}
    with pytest.raises(ValueError, match="one adapter"):
        _population(executor, teachers=2, students=2, shared=True)


def test_generation_trains_evolves_logs_and_resumes_exactly(executor, tmp_path):
    from rlvr_gym.algorithms.populora.adapters import read_factors

    straight = _population(executor)
    before = {n: read_factors(straight.model, n) for n in straight.members}
    log = straight.run_generation()
    assert set(log.fitness) == {"teacher0/teacher", "teacher1/teacher", "student0/student", "student1/student"}
    assert set(log.operators) == set(straight.members) and "keep" in log.operators.values()
    assert log.rewards["teacher0/propose"] == -1.0  # a random network proposes nothing valid
    assert set(log.held_solve_rate) == set(log.held_solve_rate_start) == {"student0", "student1"}
    assert all(v > 0 for v in log.delta_w.values())  # members start off zero (init_b_std), so operators act
    for name, op in log.operators.items():  # kept members are untouched by evolution, the others rewritten
        after = read_factors(straight.model, name)
        changed = any(not torch.equal(before[name][n][0], after[n][0]) for n in after)
        assert changed == (op != "keep" or log.updates[name] > 0), (name, op)
    straight.save(tmp_path / "gen1.pt")
    straight.run_generation()

    resumed = _population(executor)
    resumed.load(tmp_path / "gen1.pt")
    assert resumed.generation == 1 and len(resumed.logs) == 1
    resumed.run_generation()
    assert resumed.buffer.state() == straight.buffer.state()
    for name in straight.members:
        a, b = read_factors(straight.model, name), read_factors(resumed.model, name)
        for layer in a:
            torch.testing.assert_close(a[layer], b[layer], atol=0, rtol=0)
    assert [x.operators for x in straight.logs] == [x.operators for x in resumed.logs]


def test_update_moves_only_the_adapter_whose_batch_has_contrast(executor):
    from rlvr_gym.algorithms.populora.adapters import read_factors
    from rlvr_gym.algorithms.populora.policy import Sample

    population = _population(executor)
    before = {n: read_factors(population.model, n) for n in population.members}
    ids = population._encode("def f(x): return x")
    samples = [
        Sample("student1", "solve:deduction", ids, torch.tensor([10, 11, 12]), 1.0),
        Sample("student1", "solve:deduction", ids, torch.tensor([13, 14]), -0.5),
        Sample("teacher0", "propose:deduction", ids, torch.tensor([10]), -1.0),
        Sample("teacher0", "propose:deduction", ids, torch.tensor([11]), -1.0),
    ]
    stepped = population.update(samples)
    assert stepped == {"teacher0": False, "teacher1": False, "student0": False, "student1": True}
    for name in population.members:
        after = read_factors(population.model, name)
        moved = any(not torch.equal(before[name][n][1], after[n][1]) for n in after)
        assert moved == (name == "student1"), name


def test_member_initialisation_is_distinct_and_seeded(executor):
    from rlvr_gym.algorithms.populora.population import delta_norm

    one, two = _population(executor), _population(executor)
    norms = [delta_norm(one.model, n) for n in one.members]
    assert all(n > 0 for n in norms) and len(set(norms)) == len(norms)
    assert norms == [delta_norm(two.model, n) for n in two.members]
    zero = _population(executor, init_b_std=0.0)
    assert all(delta_norm(zero.model, n) == 0 for n in zero.members)
