"""Autograd for `pk.linalg`: the factorizations run as kernels on inputs cut from the graph,
and each float result is recorded with its backward, a composition of tensor ops (matmul,
solve, elementwise), as PyTorch's `torch.linalg` differentiates. A function of several
results records each with the part of the gradient that comes from it: the parts add up,
since the backward is linear in the results' gradients.

Conventions (PyTorch's):
- Complex matrices: the gradient of a real loss L of A = X + iY is dL/dX + i dL/dY; every
  formula below is written for them (conjugate transposes), a real matrix being the case
  where conjugation does nothing.
- `eigh`, `eigvalsh` and `cholesky` read one triangle of a matrix that is taken to be
  symmetric (Hermitian): their input gradient is the symmetric (Hermitian) one (the
  derivative along such perturbations), whatever the other triangle holds.
- Eigenvectors and singular vectors are defined up to sign (complex ones up to a phase
  e^{iφ}): a loss that depends on their sign has no well-defined gradient; one that depends
  on the complex phases is a RuntimeError at backward, as PyTorch's. Repeated eigenvalues
  (singular values) make the vectors' gradients infinite or nan; the values' gradients stay
  finite.
- `slogdet`'s real sign has no gradient (it is piecewise constant; a complex one has);
  `det`, `slogdet` and `inv` need nonsingular matrices, `solve` a nonsingular `x1`.
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
from pykern.tensor.core.tensor import Tensor
from pykern.tensor.elementwise.functions import assign
from pykern.tensor.core.strided import view

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
    """The conjugate transpose Aᴴ of each matrix (the transpose of a real one)."""
    return pk.conj(a).mT if a.dtype.is_complex else a.mT


def _conj(a: Tensor) -> Tensor:
    return pk.conj(a) if a.dtype.is_complex else a


def _diag(v: Tensor) -> Tensor:
    """The (..., n, n) diagonal matrices of the (..., n) vectors `v`."""
    n = v.shape[-1]
    return v.reshape(v.shape + (1,)) * pk.eye(n, dtype=v.dtype)


def _sym(a: Tensor) -> Tensor:
    """The Hermitian (real: symmetric) part (A + Aᴴ) / 2."""
    return (a + _t(a)) * 0.5


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


def _imag_diagonal(m: Tensor) -> Tensor:
    """i·Im(diag(M)) as (..., n, n) diagonal matrices."""
    return _diag(pk.imag(pk.linalg.diagonal(m)).astype(m.dtype) * 1j)


def _check_gauge(name: str, phase: Tensor, g: Tensor, n: int) -> None:
    """Complex eigenvectors and singular vectors are defined up to a phase e^{iφ} per vector:
    a loss that depends on the phases has no gradient. Its derivative along the phases is
    Im(diag(Vᴴ G_V)) (`phase` (..., k), sums of `n` products): a RuntimeError, as PyTorch's,
    when it is not ~0 against the size of that matrix's G (a loss that is phase-invariant
    leaves only rounding there). Each matrix of a batch against its own G (`g`: the batch
    axes of `phase`, then that matrix's gradient): against the whole batch's, a matrix whose
    loss depends only on the phases passed unnoticed next to one with a larger gradient."""
    if not phase.size:
        return
    scale = pk.max(pk.abs(g), axis=tuple(range(phase.ndim - 1, g.ndim)))
    ratio = pk.max(pk.abs(phase), axis=-1) / pk.maximum(scale, 1e-30)
    worst = float(pk.max(ratio).item())
    if worst > 1e-3 * max(1, n):
        raise RuntimeError(
            f"pk.{name}: the loss depends on the phases of the complex singular vectors or "
            "eigenvectors, which are defined only up to a factor e^(i phi) each (the derivative "
            f"along them is {worst:.3g} of the gradient's size, not 0): it has no well-defined "
            "gradient. Use a phase-invariant function of them (abs(v), v @ v.mH, ...)")


# ------------------------------------------------------------------ the backward formulas
# Written for complex matrices, in PyTorch's convention (the gradient of a real loss L of
# A = X + iY is dL/dX + i dL/dY, so dL = Re tr(Gᴴ dA)): the formulas for real matrices with
# every transpose conjugated (ᴴ, the adjoint of each linear step under Re tr(Xᴴ Y)), plus
# the terms real matrices do not have (each noted).

def inv(a: Tensor, y: Tensor) -> list[Backward]:
    """Y = A⁻¹: dA = -Yᴴ G Yᴴ."""
    return [lambda g: (-pk.matmul(pk.matmul(_t(y), g), _t(y)),)]


def solve(a: Tensor, b: Tensor, x: Tensor) -> list[Backward]:
    """X = A⁻¹ B: dB = A⁻ᴴ G, dA = -dB Xᴴ (B a vector (n,): one right-hand side per matrix)."""
    vector = b.ndim == 1

    def back(g: Tensor) -> tuple[Tensor, Tensor]:
        if vector:
            gb = pk.linalg.solve(_t(a), _col(g))
            return -pk.matmul(gb, _conj(_row(x))), gb[..., 0]
        gb = pk.linalg.solve(_t(a), g)
        return -pk.matmul(gb, _t(x)), gb

    return [back]


def det(a: Tensor, d: Tensor) -> list[Backward]:
    """d = det A: dA = G · conj(d) · A⁻ᴴ."""
    return [lambda g: (_col(_col(g * _conj(d))) * _t(pk.linalg.inv(a)),)]


def slogdet(a: Tensor, sign: Tensor, logabs: Tensor) -> list[Backward | None]:
    """log|det A| = Re log det A: dA = G · A⁻ᴴ. A real sign has none (it is piecewise
    constant); a complex one, s = e^{iθ} with θ = Im log det A, gives
    dA = i·Im(conj(s) G_s) · A⁻ᴴ."""
    from_sign = None
    if sign.dtype.is_complex:
        def from_sign(g: Tensor) -> tuple[Tensor]:
            phase = pk.imag(pk.conj(sign) * g).astype(a.dtype) * 1j
            return (_col(_col(phase)) * _t(pk.linalg.inv(a)),)
    return [from_sign, lambda g: (_col(_col(g)) * _t(pk.linalg.inv(a)),)]


def cholesky(upper: bool) -> Callable[[Tensor, Tensor], list[Backward]]:
    """A = L Lᴴ: dA = herm(L⁻ᴴ Φ(Lᴴ G) L⁻¹), Φ the lower triangle with its diagonal halved,
    herm the Hermitian part (U = Lᴴ: G_L = G_Uᴴ)."""
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
    """A = QR (Q m x k, R k x n, R's diagonal real). Tall or square (m ≥ n):
    dA = (G_Q + Q copyltu(M)) R⁻ᴴ with M = R G_Rᴴ - G_Qᴴ Q, copyltu(M) the Hermitian matrix
    of M's strict lower triangle and Re(diag M) (complex: the imaginary part of the diagonal
    is Qᴴ dQ's, which R's real diagonal leaves out). Wide (m < n): A = [X Y], R = [R1 R2]:
    X's gradient is the square one with G_Q + Y G_R2ᴴ and G_R1, and dY = Q G_R2."""
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
        diag = pk.linalg.diagonal(mm)
        if diag.dtype.is_complex:
            diag = pk.real(diag).astype(diag.dtype)
        copy = low + _t(low) + _diag(diag)
        rhs = pk.matmul(q, copy) if gq is None else gq + pk.matmul(q, copy)
        # rhs R1⁻ᴴ = (R1⁻¹ rhsᴴ)ᴴ
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
    """A = V diag(λ) Vᴴ: from G_λ, V diag(G_λ) Vᴴ; from G_V, V herm(F ∘ VᴴG_V) Vᴴ with
    F_ij = 1 / (λ_j - λ_i) off the diagonal. Complex V is defined up to a phase per column:
    the loss must not depend on it (Im diag(VᴴG_V) = 0, checked)."""
    f = _inverse_gaps(lam)

    def from_v(g: Tensor) -> tuple[Tensor]:
        vh_g = pk.matmul(_t(v), g)
        if vh_g.dtype.is_complex:
            _check_gauge("linalg.eigh", pk.imag(pk.linalg.diagonal(vh_g)), g, v.shape[-2])
        return (pk.matmul(pk.matmul(v, _sym(f * vh_g)), _t(v)),)

    return [lambda g: (pk.matmul(v * _row(g), _t(v)),), from_v]


def eigvalsh(a: Tensor, lam: Tensor, v: Tensor) -> list[Backward]:
    return eigh(a, lam, v)[:1]


def svd(a: Tensor, u: Tensor, s: Tensor, vh: Tensor) -> list[Backward]:
    """A = U diag(S) Vᴴ (thin: U m x k, V n x k). From G_S: U diag(G_S) Vᴴ. From G_U:
    U (F ∘ (UᴴG_U - G_UᴴU)) S Vᴴ + (I - UUᴴ) G_U S⁻¹ Vᴴ; from G_V (= G_Vhᴴ):
    U S (F ∘ (VᴴG_V - G_VᴴV)) Vᴴ + U S⁻¹ G_Vᴴ (I - VVᴴ); F_ij = 1 / (s_j² - s_i²).
    Complex U and V are defined up to one phase per pair of columns (U D, V D): the part
    along those phases is U (i·Im diag(UᴴG_U) S⁻¹) Vᴴ, with the loss required not to depend
    on them (Im diag(UᴴG_U + VᴴG_V) = 0, which `svd_complex` checks)."""
    v = _t(vh)
    f = _inverse_gaps(s * s)
    m, n = a.shape[-2:]

    def from_s(g: Tensor) -> tuple[Tensor]:
        return (pk.matmul(u * _row(g), vh),)

    def from_u(g: Tensor) -> tuple[Tensor]:
        ut_g = pk.matmul(_t(u), g)
        inner = f * (ut_g - _t(ut_g)) * _row(s)
        if ut_g.dtype.is_complex:
            inner = inner + _imag_diagonal(ut_g) / _row(s)
        out = pk.matmul(pk.matmul(u, inner), vh)
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

    def back(g: Tensor) -> tuple[Tensor]:
        z = pk.zeros(x.shape, g.dtype)
        if g.size:
            sm, sn = z.element_strides[-2:]
            start = offset * sn if offset >= 0 else -offset * sm
            assign(view(z, g.shape, z.element_strides[:-2] + (sm + sn,), start), g)
        return (z,)

    return [back]



def svd_complex(name: str, t: Tensor, forward: Callable[[Tensor], Any]) -> Any:
    """`svd` of a complex `t` that requires grad, recorded as one node, so that its backward
    sees the gradients of U and Vh together and can check that the loss does not depend on
    the singular vectors' phases (U D, Vh with D* for a diagonal unitary D), which only their
    sum says: U, S and Vh are views of one packed result, whose gradient holds all three.
    (Full square matrices or thin ones: the refused full non-square case never comes here.)"""
    with no_grad():
        result = forward(t.detach())
    u, s, vh = result
    batch = tuple(u.shape[:-2])
    # the sizes are spelled out, not -1: a reshape cannot infer a size for an empty batch
    nu, ns, nvh = u.shape[-2] * u.shape[-1], s.shape[-1], vh.shape[-2] * vh.shape[-1]
    with no_grad():
        packed = pk.concat([u.reshape(batch + (nu,)), s.astype(u.dtype),
                            vh.reshape(batch + (nvh,))], axis=-1)
    parts = svd(t, u, s, vh)

    def back(g: Tensor) -> tuple[Tensor]:
        gu = g[..., :nu].reshape(u.shape)
        gs = pk.real(g[..., nu:nu + ns])
        gvh = g[..., nu + ns:].reshape(vh.shape)
        phase = pk.imag(pk.linalg.diagonal(pk.matmul(_t(u), gu))
                        + pk.linalg.diagonal(pk.matmul(vh, _t(gvh))))
        _check_gauge(name, phase, pk.concat([gu.reshape(batch + (nu,)),
                                             gvh.reshape(batch + (nvh,))], axis=-1),
                     max(u.shape[-2], vh.shape[-1]))
        return (parts[1](gs)[0] + parts[0](gu)[0] + parts[2](gvh)[0],)

    packed = record(name, packed, (t,), back)
    return type(result)(packed[..., :nu].reshape(u.shape),
                        pk.real(packed[..., nu:nu + ns]).contiguous(),
                        packed[..., nu + ns:].reshape(vh.shape).contiguous())
