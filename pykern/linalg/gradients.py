"""Autograd for `pk.linalg`: the factorizations run as kernels on inputs cut from the graph,
and each float result is recorded with its backward, a composition of tensor ops (matmul,
solve, elementwise), as PyTorch's `torch.linalg` differentiates. A function of several
results records each with the part of the gradient that comes from it: the parts add up,
since the backward is linear in the results' gradients.

Conventions (PyTorch's):
- `eigh`, `eigvalsh` and `cholesky` read one triangle of a matrix that is taken to be
  symmetric: their input gradient is the symmetric one (the derivative along symmetric
  perturbations), whatever the other triangle holds.
- Eigenvectors and singular vectors are defined up to sign: a loss that depends on their
  sign has no well-defined gradient. Repeated eigenvalues (singular values) make the
  vectors' gradients infinite or nan; the values' gradients stay finite.
- `slogdet`'s sign has no gradient (it is piecewise constant); `det`, `slogdet` and `inv`
  need nonsingular matrices, `solve` a nonsingular `x1`.
- `qr` is differentiated for mode="reduced" and for square or wide matrices in "complete"
  mode; `svd` for full_matrices=False or square matrices (elsewhere the extra columns of Q,
  U or Vh are not unique, and asking for a gradient is a NotImplementedError).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pykern as pk

from pykern.autograd.graph import needs_grad, record
from pykern.autograd.mode import no_grad
from pykern.tensor.tensor import Tensor

Backward = Callable[[Tensor], tuple[Tensor | None, ...]]


def differentiable(name: str, inputs: Sequence[Tensor], forward: Callable[..., Any],
                   backward: Callable[..., Sequence[Backward | None]],
                   complex_ok: bool = False) -> Any:
    """`forward(*inputs)`; where an input requires grad, run on the inputs cut from the graph
    and each result recorded with `backward(*inputs, *results)[i]` (None: that result has
    no gradient). A tuple of results keeps its type (the NamedTuples of linalg).
    `complex_ok`: the backward is right for complex inputs too (else they are refused)."""
    if not needs_grad(*inputs, complex_ok=complex_ok):
        return forward(*inputs)
    plain = [t.detach() for t in inputs]
    with no_grad():
        result = forward(*plain)
    outs = tuple(result) if isinstance(result, tuple) else (result,)
    backs = backward(*plain, *outs)
    recorded = [o if b is None else record(name, o, inputs, b) for o, b in zip(outs, backs)]
    if not isinstance(result, tuple):
        return recorded[0]
    return type(result)(*recorded) if hasattr(result, "_fields") else tuple(recorded)


def refuse(name: str, why: str) -> None:
    """A gradient this function cannot give for these arguments: a clear error up front."""
    raise NotImplementedError(f"pk.{name} has no backward {why}: compute it under "
                              "pk.no_grad() or on .detach()ed inputs")


# ------------------------------------------------------------------ helpers

def _t(a: Tensor) -> Tensor:
    return a.mT


def _diag(v: Tensor) -> Tensor:
    """The (..., n, n) diagonal matrices of the (..., n) vectors `v`."""
    n = v.shape[-1]
    return v.reshape(v.shape + (1,)) * pk.eye(n, dtype=v.dtype)


def _sym(a: Tensor) -> Tensor:
    return (a + a.mT) * 0.5


def _inverse_gaps(lam: Tensor) -> Tensor:
    """F[..., i, j] = 1 / (lam_j - lam_i) off the diagonal, 0 on it."""
    gaps = lam.reshape(lam.shape[:-1] + (1, lam.shape[-1])) \
        - lam.reshape(lam.shape + (1,))
    off = pk.logical_not(pk.eye(lam.shape[-1], dtype=pk.bool_))
    return pk.where(off, 1.0 / pk.where(off, gaps, 1.0), 0.0).astype(lam.dtype)


def _col(v: Tensor) -> Tensor:
    return v.reshape(v.shape + (1,))


def _row(v: Tensor) -> Tensor:
    return v.reshape(v.shape[:-1] + (1, v.shape[-1]))


# ------------------------------------------------------------------ the backward formulas

def inv(a: Tensor, y: Tensor) -> list[Backward]:
    """Y = A⁻¹: dA = -Yᵀ G Yᵀ."""
    return [lambda g: (-pk.matmul(pk.matmul(_t(y), g), _t(y)),)]


def solve(a: Tensor, b: Tensor, x: Tensor) -> list[Backward]:
    """X = A⁻¹ B: dB = A⁻ᵀ G, dA = -dB Xᵀ (B a vector (n,): one right-hand side per matrix)."""
    vector = b.ndim == 1

    def back(g: Tensor) -> tuple[Tensor, Tensor]:
        if vector:
            gb = pk.linalg.solve(_t(a), _col(g))
            return -pk.matmul(gb, _row(x)), gb[..., 0]
        gb = pk.linalg.solve(_t(a), g)
        return -pk.matmul(gb, _t(x)), gb

    return [back]


def det(a: Tensor, d: Tensor) -> list[Backward]:
    """d = det A: dA = G · d · A⁻ᵀ."""
    return [lambda g: (_col(_col(g * d)) * _t(pk.linalg.inv(a)),)]


def slogdet(a: Tensor, sign: Tensor, logabs: Tensor) -> list[Backward | None]:
    """log|det A|: dA = G · A⁻ᵀ; the sign has none."""
    return [None, lambda g: (_col(_col(g)) * _t(pk.linalg.inv(a)),)]


def cholesky(upper: bool) -> Callable[[Tensor, Tensor], list[Backward]]:
    """A = L Lᵀ: dA = sym(L⁻ᵀ Φ(Lᵀ G) L⁻¹), Φ the lower triangle with its diagonal halved
    (U = Lᵀ: G_L = G_Uᵀ)."""
    def formulas(a: Tensor, out: Tensor) -> list[Backward]:
        low = _t(out) if upper else out

        def back(g: Tensor) -> tuple[Tensor]:
            gl = _t(g) if upper else g
            p = pk.tril(pk.matmul(_t(low), gl))
            p = p - _diag(pk.linalg.diagonal(p)) * 0.5
            li = pk.linalg.inv(low)
            return (_sym(pk.matmul(pk.matmul(_t(li), p), li)),)

        return [back]

    return formulas


def qr(a: Tensor, q: Tensor, r: Tensor) -> list[Backward]:
    """A = QR (Q m x k, R k x n). Tall or square (m ≥ n): dA = (G_Q + Q copyltu(M)) R⁻ᵀ with
    M = R G_Rᵀ - G_Qᵀ Q, copyltu the symmetric matrix of M's lower triangle. Wide (m < n):
    A = [X Y], R = [R1 R2]: X's gradient is the square one with G_Q + Y G_R2ᵀ and G_R1, and
    dY = Q G_R2."""
    m, n = a.shape[-2:]
    k = min(m, n)

    def square(gq: Tensor | None, gr: Tensor | None) -> Tensor:
        r1 = r[..., :, :k]
        mm = 0.0
        if gr is not None:
            mm = pk.matmul(r1, _t(gr))
        if gq is not None:
            mm = mm - pk.matmul(_t(gq), q)
        low = pk.tril(mm, k=-1)
        copy = low + _t(low) + _diag(pk.linalg.diagonal(mm))
        rhs = pk.matmul(q, copy) if gq is None else gq + pk.matmul(q, copy)
        # rhs R1⁻ᵀ = (R1⁻¹ rhsᵀ)ᵀ
        return _t(pk.linalg.solve(r1, _t(rhs)))

    def from_q(g: Tensor) -> tuple[Tensor]:
        gx = square(g, None)
        if m >= n:
            return (gx,)
        return (pk.concat([gx, pk.zeros(gx.shape[:-1] + (n - m,), gx.dtype)], axis=-1),)

    def from_r(g: Tensor) -> tuple[Tensor]:
        if m >= n:
            return (square(None, g),)
        g1, g2 = g[..., :, :m], g[..., :, m:]
        gx = square(pk.matmul(a[..., :, m:], _t(g2)), g1)
        return (pk.concat([gx, pk.matmul(q, g2)], axis=-1),)

    return [from_q, from_r]


def eigh(a: Tensor, lam: Tensor, v: Tensor) -> list[Backward]:
    """A = V diag(λ) Vᵀ: from G_λ, V diag(G_λ) Vᵀ; from G_V, V sym(F ∘ VᵀG_V) Vᵀ with
    F_ij = 1 / (λ_j - λ_i) off the diagonal."""
    f = _inverse_gaps(lam)
    return [lambda g: (pk.matmul(v * _row(g), _t(v)),),
            lambda g: (pk.matmul(pk.matmul(v, _sym(f * pk.matmul(_t(v), g))), _t(v)),)]


def eigvalsh(a: Tensor, lam: Tensor, v: Tensor) -> list[Backward]:
    return eigh(a, lam, v)[:1]


def svd(a: Tensor, u: Tensor, s: Tensor, vh: Tensor) -> list[Backward]:
    """A = U diag(S) Vᵀ (thin: U m x k, V n x k). From G_S: U diag(G_S) Vᵀ. From G_U:
    U (F ∘ (UᵀG_U - G_UᵀU)) S Vᵀ + (I - UUᵀ) G_U S⁻¹ Vᵀ; from G_V (= G_Vhᵀ):
    U S (F ∘ (VᵀG_V - G_VᵀV)) Vᵀ + U S⁻¹ G_Vᵀ (I - VVᵀ); F_ij = 1 / (s_j² - s_i²)."""
    v = _t(vh)
    f = _inverse_gaps(s * s)
    m, n = a.shape[-2:]

    def from_s(g: Tensor) -> tuple[Tensor]:
        return (pk.matmul(u * _row(g), vh),)

    def from_u(g: Tensor) -> tuple[Tensor]:
        ut_g = pk.matmul(_t(u), g)
        inner = pk.matmul(u, f * (ut_g - _t(ut_g)) * _row(s))
        out = pk.matmul(inner, vh)
        if m > s.shape[-1]:  # the part of G_U outside U's span
            rest = (g - pk.matmul(u, ut_g)) / _row(s)
            out = out + pk.matmul(rest, vh)
        return (out,)

    def from_vh(g: Tensor) -> tuple[Tensor]:
        gv = _t(g)
        vt_g = pk.matmul(vh, gv)
        out = pk.matmul(u * _row(s), pk.matmul(f * (vt_g - _t(vt_g)), vh))
        if n > s.shape[-1]:
            rest = (gv - pk.matmul(v, vt_g)) / _row(s)
            out = out + pk.matmul(u, _t(rest))
        return (out,)

    return [from_u, from_s, from_vh]


def diagonal(x: Tensor, offset: int, out: Tensor) -> list[Backward]:
    """The diagonal's gradient goes back onto the diagonal, zeros elsewhere."""
    from pykern.tensor.elementwise import assign
    from pykern.tensor.strided import view

    def back(g: Tensor) -> tuple[Tensor]:
        z = pk.zeros(x.shape, g.dtype)
        if g.size:
            sm, sn = z.element_strides[-2:]
            start = offset * sn if offset >= 0 else -offset * sm
            assign(view(z, g.shape, z.element_strides[:-2] + (sm + sn,), start), g)
        return (z,)

    return [back]
