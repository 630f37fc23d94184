"""Singular values and Hermitian eigenvalues of complex matrices, through their real
embeddings: Z = A + iB acts on (x, y) ∈ R²ⁿ as E = [[A, -B], [B, A]], whose singular values
(eigenvalues, for Hermitian Z) are Z's, each twice. Sorted, they come in equal pairs, so every
second one is Z's: exactly the multiset, repeated values included. (The vectors of a pair span a
two-dimensional space that does not single out Z's vectors when values repeat, which is why
`svd` and `eigh` do not take complex input this way.)"""

from __future__ import annotations

from pykern.tensor import elementwise as ew
from pykern.tensor.creation import tril
from pykern.tensor.indexing import concat
from pykern.tensor.tensor import Tensor


def real_embedding(z: Tensor, hermitian: bool = False) -> Tensor:
    """E = [[A, -B], [B, A]] of the (..., M, N) complex stack z = A + iB; with `hermitian`, of
    the Hermitian matrix whose lower triangle is z's (A mirrored, B antisymmetric)."""
    a, b = z.real.contiguous(), z.imag.contiguous()
    if hermitian:
        below = tril(b, k=-1)
        b = ew.subtract(below, below.mT)
        a = ew.add(tril(a), tril(a, k=-1).mT)
    top = concat([a, ew.negative(b)], axis=-1)
    bottom = concat([b, a], axis=-1)
    return concat([top, bottom], axis=-2)


def every_second(values: Tensor) -> Tensor:
    """values[..., ::2] as a new tensor: one of each equal pair."""
    return values[..., ::2].contiguous()
