"""Weight-space operators on LoRA adapters: mutations M1-M5 and crossovers X1-X5 (METHODS.md 3.3).

Every operator maps `Factors` (layer -> (A [r, in], B [out, r])) to new factors of the same rank in seconds, which
is what lets a population replace members without training from scratch. Randomness comes only from the
`torch.Generator` passed in, so a population step is reproducible from its seed. Crossovers first bring parents
to balanced SVD form (`lowrank.canonical`): factor bases of two adapters are otherwise arbitrary, and averaging
them would mix unrelated directions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import torch

from .lowrank import Factors, Triplets, canonical, is_fresh, svd_of

Mutation = Callable[..., Factors]
Crossover = Callable[..., Factors]


def _normal(like: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    return torch.randn(like.shape, generator=gen, dtype=like.dtype, device=like.device)


def _skew(m: torch.Tensor) -> torch.Tensor:
    return (m - m.T) / 2


def _rotated(t: Triplets, sigma: float, gen: torch.Generator) -> Triplets:
    r = t.s.numel()
    eye = torch.eye(r, dtype=t.s.dtype)
    s = t.s * torch.exp(sigma * _normal(t.s, gen))
    u = t.u @ (eye + sigma * _skew(_normal(eye, gen)))
    v = t.v @ (eye + sigma * _skew(_normal(eye, gen)))
    return Triplets(u, s, v)


# ---- mutations --------------------------------------------------------------------------------------------------
def m1_svd_structured(f: Factors, gen: torch.Generator, *, sigma: float = 0.1) -> Factors:
    """Jitter singular values log-normally and rotate both singular bases by I + sigma * skew(N)."""
    return {
        n: (a.clone(), b.clone()) if is_fresh(a, b) else _rotated(svd_of(a, b), sigma, gen).factors()
        for n, (a, b) in f.items()
    }


def m2_layer_selective_gaussian(
    f: Factors, gen: torch.Generator, *, fraction: float = 0.33, eps: float = 0.1
) -> Factors:
    """Gaussian noise (eps * std of each factor) on a random fraction of the layers only."""
    names = sorted(f)
    count = max(1, math.ceil(fraction * len(names)))
    chosen = {names[i] for i in torch.randperm(len(names), generator=gen)[:count].tolist()}
    return {n: _noisy(a, b, eps, gen) if n in chosen else (a.clone(), b.clone()) for n, (a, b) in f.items()}


def _noisy(a: torch.Tensor, b: torch.Tensor, eps: float, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    return a + eps * a.std() * _normal(a, gen), b + eps * b.std() * _normal(b, gen)


def m3_component_masking(f: Factors, gen: torch.Generator, *, rho: float = 0.3) -> Factors:
    """Zero ceil(rho * r) random singular values (the rank of the stored factors stays r)."""
    out = {}
    for n, (a, b) in f.items():
        if is_fresh(a, b):
            out[n] = (a.clone(), b.clone())
            continue
        t = svd_of(a, b)
        r = t.s.numel()
        s = t.s.clone()
        s[torch.randperm(r, generator=gen)[: math.ceil(rho * r)]] = 0
        out[n] = Triplets(t.u, s, t.v).factors()
    return out


def m4_full_gaussian(f: Factors, gen: torch.Generator, *, eps: float = 0.15) -> Factors:
    """Gaussian noise of eps * std on every factor of every layer."""
    return {n: _noisy(a, b, eps, gen) for n, (a, b) in f.items()}


def m5_neftune_style(f: Factors, gen: torch.Generator, *, alpha: float = 10.0) -> Factors:
    """Uniform noise of +-alpha / sqrt(in * r) on the down-projection A only."""
    out = {}
    for n, (a, b) in f.items():
        bound = alpha / math.sqrt(a.shape[0] * a.shape[1])
        noise = (torch.rand(a.shape, generator=gen, dtype=a.dtype) * 2 - 1) * bound
        out[n] = (a + noise, b.clone())
    return out


# ---- crossovers -------------------------------------------------------------------------------------------------
def x1_dare(parents: Sequence[Factors], gen: torch.Generator, *, p: float = 0.7, **_: object) -> Factors:
    """Drop each factor entry with prob p (survivors scaled 1/(1-p)), then average parents: unbiased in expectation."""
    ps = [canonical(x) for x in parents]

    def drop(t: torch.Tensor) -> torch.Tensor:
        return t * (torch.rand(t.shape, generator=gen, dtype=t.dtype) >= p) / (1 - p)

    return {n: (sum(drop(x[n][0]) for x in ps) / len(ps), sum(drop(x[n][1]) for x in ps) / len(ps)) for n in ps[0]}


def x2_layerwise(parents: Sequence[Factors], gen: torch.Generator, **_: object) -> Factors:
    """Each layer copied whole from one random parent."""
    picks = torch.randint(len(parents), (len(parents[0]),), generator=gen).tolist()
    return {n: tuple(t.clone() for t in parents[k][n]) for n, k in zip(sorted(parents[0]), picks, strict=True)}


def x3_svd_subspace(parents: Sequence[Factors], gen: torch.Generator, **_: object) -> Factors:
    """Singular triplets 0..k-1 from parent 1 and k..r-1 from parent 2, k uniform in [1, r)."""
    first, second = parents[0], parents[1]
    out = {}
    for n in first:
        if is_fresh(*first[n]) or is_fresh(*second[n]):
            out[n] = tuple(t.clone() for t in first[n])
            continue
        t1, t2 = svd_of(*first[n]), svd_of(*second[n])
        r = t1.s.numel()
        k = int(torch.randint(1, r, (1,), generator=gen)) if r > 1 else 1
        child = Triplets(
            torch.cat([t1.u[:, :k], t2.u[:, k:]], 1),
            torch.cat([t1.s[:k], t2.s[k:]]),
            torch.cat([t1.v[:, :k], t2.v[:, k:]], 1),
        )
        out[n] = child.factors()
    return out


def x4_extrapolative(
    parents: Sequence[Factors],
    gen: torch.Generator,
    *,
    fitness: Sequence[float],
    low: float = 1.0,
    high: float = 1.5,
    **_: object,
) -> Factors:
    """child = worse + eta * (better - worse), eta ~ U(low, high): a step past the better parent."""
    worse, better = (canonical(parents[0]), canonical(parents[1]))
    if fitness[0] > fitness[1]:
        worse, better = better, worse
    eta = low + (high - low) * float(torch.rand((), generator=gen))
    return {n: tuple(w + eta * (bt - w) for w, bt in zip(worse[n], better[n], strict=True)) for n in worse}


def x5_xes(
    parents: Sequence[Factors], gen: torch.Generator, *, fitness: Sequence[float], eta: float = 0.1, **_: object
) -> Factors:
    """Mean of the parents plus eta * sum_i z(fitness_i) * theta_i (an evolution-strategies step; z = 0 if all tie)."""
    ps = [canonical(x) for x in parents]
    fit = torch.tensor(list(fitness), dtype=torch.float64)
    std = fit.std(unbiased=False)
    z = (fit - fit.mean()) / std if std > 0 else torch.zeros_like(fit)
    out = {}
    for n in ps[0]:
        out[n] = tuple(
            sum(x[n][j] for x in ps) / len(ps) + eta * sum(float(zi) * x[n][j] for zi, x in zip(z, ps, strict=True))
            for j in (0, 1)
        )
    return out


def average(parents: Sequence[Factors], gen: torch.Generator, **_: object) -> Factors:
    ps = [canonical(x) for x in parents]
    return {n: tuple(sum(x[n][j] for x in ps) / len(ps) for j in (0, 1)) for n in ps[0]}


def clone(parents: Sequence[Factors], gen: torch.Generator, **_: object) -> Factors:
    return {n: (a.clone(), b.clone()) for n, (a, b) in parents[0].items()}


MUTATIONS: dict[str, Mutation] = {
    "M1": m1_svd_structured,
    "M2": m2_layer_selective_gaussian,
    "M3": m3_component_masking,
    "M4": m4_full_gaussian,
    "M5": m5_neftune_style,
}
CROSSOVERS: dict[str, Crossover] = {
    "X1": x1_dare,
    "X2": x2_layerwise,
    "X3": x3_svd_subspace,
    "X4": x4_extrapolative,
    "X5": x5_xes,
    "average": average,
    "clone": clone,
}
