"""LoRA operators on small random factors: rank kept, exact SVD re-factorisation, identity crossovers, schedule."""

from __future__ import annotations

import random

import pytest
import torch

from rlvr_gym.algorithms.populora.lowrank import canonical, products, refactor, svd_of
from rlvr_gym.algorithms.populora.operators import CROSSOVERS, MUTATIONS
from rlvr_gym.algorithms.populora.selection import plan_generation, tournament

R = 4


def _factors(seed: int, layers: int = 3) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(seed)
    return {
        f"layer{i}": (
            torch.randn(R, 12 + i, generator=g, dtype=torch.float64),
            torch.randn(10 + i, R, generator=g, dtype=torch.float64),
        )
        for i in range(layers)
    }


def _close(x, y, tol=1e-9):
    for name in x:
        torch.testing.assert_close(x[name], y[name], atol=tol, rtol=tol)


def test_svd_refactorisation_is_exact_on_the_product_and_keeps_rank():
    a, b = _factors(0)["layer0"]
    a2, b2 = refactor(a, b)
    assert a2.shape == a.shape and b2.shape == b.shape
    torch.testing.assert_close(b2 @ a2, b @ a, atol=1e-10, rtol=1e-10)
    t = svd_of(a, b)
    torch.testing.assert_close(t.s, torch.linalg.svdvals(b @ a)[:R], atol=1e-10, rtol=1e-10)
    torch.testing.assert_close(t.u.T @ t.u, torch.eye(R, dtype=torch.float64), atol=1e-10, rtol=0)


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_mutations_keep_shapes_change_the_product_and_are_seeded(name):
    f = _factors(1)
    out = MUTATIONS[name](f, torch.Generator().manual_seed(7))
    again = MUTATIONS[name](f, torch.Generator().manual_seed(7))
    assert {n: (a.shape, b.shape) for n, (a, b) in out.items()} == {n: (a.shape, b.shape) for n, (a, b) in f.items()}
    _close(products(out), products(again), tol=0)
    assert any(not torch.allclose(products(out)[n], products(f)[n]) for n in f)


def test_component_masking_lowers_the_product_rank():
    out = MUTATIONS["M3"](_factors(2), torch.Generator().manual_seed(0), rho=0.5)
    for a, b in out.values():
        assert torch.linalg.matrix_rank(b @ a) == R // 2


@pytest.mark.parametrize("name", ["X2", "X3", "X4", "X5", "average", "clone"])
def test_crossover_of_identical_parents_is_identity(name):
    f = _factors(3)
    child = CROSSOVERS[name]([f, f], torch.Generator().manual_seed(0), fitness=[0.4, 0.4])
    _close(products(child), products(f))


def test_dare_is_identity_in_expectation_only():
    f = _factors(4, layers=1)
    gen = torch.Generator().manual_seed(0)
    draws = [products(CROSSOVERS["X1"]([f, f], gen))["layer0"] for _ in range(400)]
    target = products(f)["layer0"]
    assert not torch.allclose(draws[0], target)
    mean = torch.stack(draws).mean(0)
    assert (mean - target).abs().mean() < 0.15 * target.abs().mean()


def test_x3_joins_leading_triplets_of_parent_one_with_the_rest_of_parent_two():
    p1, p2 = _factors(5, 1), _factors(6, 1)
    child = products(CROSSOVERS["X3"]([p1, p2], torch.Generator().manual_seed(1)))["layer0"]
    t1, t2 = svd_of(*p1["layer0"]), svd_of(*p2["layer0"])

    def part(t, ix):
        return t.u[:, ix] @ torch.diag(t.s[ix]) @ t.v[:, ix].T

    splits = [part(t1, slice(0, k)) + part(t2, slice(k, R)) for k in range(1, R)]
    assert sum(torch.allclose(child, m, atol=1e-9) for m in splits) == 1


def test_x4_steps_past_the_better_parent():
    worse, better = _factors(7, 1), _factors(8, 1)
    child = CROSSOVERS["X4"]([better, worse], torch.Generator().manual_seed(0), fitness=[0.9, 0.1], low=1.5, high=1.5)
    w, b = canonical(worse)["layer0"][0], canonical(better)["layer0"][0]
    torch.testing.assert_close(child["layer0"][0], w + 1.5 * (b - w))


def test_schedule_tiers_and_tournament():
    fitness = [0.1, 0.9, 0.5, 0.7, 0.3, 0.2, 0.8, 0.0, 0.6, 0.4]
    plan = plan_generation(fitness, random.Random(0), mutations=["M1", "M4"], crossovers=["X3"])
    kinds = {a.member: a.kind for a in plan}
    assert {m for m, k in kinds.items() if k == "keep"} == {1, 6, 3}
    assert {m for m, k in kinds.items() if k == "mutate"} == {8, 2, 9, 4}
    assert {m for m, k in kinds.items() if k == "replace"} == {5, 0, 7}
    for action in plan:
        if action.kind == "replace":
            assert action.crossover == "X3" and len(set(action.parents)) == 2
            assert all(kinds[p] != "replace" for p in action.parents)
    assert plan == plan_generation(fitness, random.Random(0), mutations=["M1", "M4"], crossovers=["X3"])
    assert tournament(fitness, random.Random(0), size=len(fitness)) == 1


def test_two_member_population_keeps_the_best_and_replaces_the_worst():
    plan = plan_generation([0.2, 0.6], random.Random(0))
    assert [a.kind for a in plan] == ["replace", "keep"] or [a.kind for a in plan] == ["mutate", "keep"]
    assert plan[1].kind == "keep"


@pytest.mark.parametrize("name", ["M1", "M3"])
def test_fresh_adapters_are_not_killed_by_svd_operators(name):
    f = {n: (a, torch.zeros_like(b)) for n, (a, b) in _factors(9).items()}
    out = MUTATIONS[name](f, torch.Generator().manual_seed(0))
    assert all(torch.equal(out[n][0], f[n][0]) for n in f)
