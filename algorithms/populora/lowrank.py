"""LoRA factors of one adapter and their exact same-rank SVD form.

peft stores each adapted layer as `lora_A` [r, in] and `lora_B` [out, r] with delta W = B @ A (times a constant
scale). Operators that reason about directions (M1, M3, X3) need the product's singular triplets; an [out, in]
SVD is too slow at 7B, so both factors are QR-reduced first and only an r x r SVD is taken:
B = Qb Rb, A^T = Qa Ra  =>  B A = Qb (Rb Ra^T) Qa^T = (Qb U) S (Qa V)^T. Re-factoring as B' = Qb U sqrt(S),
A' = sqrt(S) V^T Qa^T keeps the rank and the product exactly (up to float rounding).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

Factors = dict[str, tuple[torch.Tensor, torch.Tensor]]  # layer name -> (A [r, in], B [out, r])


@dataclass(frozen=True)
class Triplets:
    """delta W = U diag(S) V^T with U [out, r], S [r] (descending), V [in, r]."""

    u: torch.Tensor
    s: torch.Tensor
    v: torch.Tensor

    def factors(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(A, B) in the balanced form A = sqrt(S) V^T, B = U sqrt(S)."""
        root = self.s.clamp_min(0).sqrt()
        return root[:, None] * self.v.T, self.u * root[None, :]


def svd_of(a: torch.Tensor, b: torch.Tensor) -> Triplets:
    """Singular triplets of B @ A via two QRs and one r x r SVD (computed in float64, returned in A's dtype)."""
    dtype = a.dtype
    qb, rb = torch.linalg.qr(b.double())
    qa, ra = torch.linalg.qr(a.double().T)
    u, s, vh = torch.linalg.svd(rb @ ra.T)
    return Triplets((qb @ u).to(dtype), s.to(dtype), (qa @ vh.T).to(dtype))


def refactor(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The same product B @ A in balanced SVD form, same rank (a fresh adapter, B = 0, is kept as it is)."""
    return (a.clone(), b.clone()) if is_fresh(a, b) else svd_of(a, b).factors()


def is_fresh(a: torch.Tensor, b: torch.Tensor) -> bool:
    """peft starts B at 0: the product is 0 and its SVD form would zero A too, leaving an adapter with no gradient."""
    return not bool(torch.any(b))


def canonical(factors: Factors) -> Factors:
    """Every layer in balanced SVD form (crossovers mix parents in comparable coordinates)."""
    return {name: refactor(a, b) for name, (a, b) in factors.items()}


def products(factors: Factors) -> dict[str, torch.Tensor]:
    return {name: b @ a for name, (a, b) in factors.items()}
