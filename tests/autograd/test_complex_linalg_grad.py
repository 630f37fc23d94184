"""Autograd of pk.linalg on complex matrices, in PyTorch's convention (z.grad = dL/dx + i dL/dy
for a real loss): every function's gradient against central differences of numpy on both
parts of the input, on well- and ill-conditioned matrices, batched, in single precision
against double, and the phase of complex eigenvectors and singular vectors, on which a loss
must not depend (a RuntimeError when it does)."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import gradcheck
import pykern as pk

RNG = np.random.default_rng(3011)
check = functools.partial(gradcheck.check_complex_grad, rng=RNG)
L = pk.linalg


def _c(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


def _eye(n: int) -> pk.Tensor:
    return pk.eye(n, dtype=pk.f64)


def _herm(t, shift: float = 3.0):
    """A Hermitian positive-definite parametrisation t tᴴ + shift·I, pykern's and numpy's."""
    n = t.shape[-1]
    if isinstance(t, np.ndarray):
        return t @ t.conj().swapaxes(-1, -2) + shift * np.eye(n)
    return t @ pk.conj(t).mT + shift * pk.eye(n, dtype=t.dtype.real_dtype)


def _conditioned(n: int, singular_values, *, batch: tuple[int, ...] = ()) -> np.ndarray:
    """A complex matrix with the given singular values (random unitary factors)."""
    u = np.linalg.qr(_c(*batch, n, n))[0]
    v = np.linalg.qr(_c(*batch, n, n))[0]
    return (u * np.asarray(singular_values)) @ v.conj().swapaxes(-1, -2)


def _proj(v, k: int = 1):
    """v[:, :k] v[:, :k]ᴴ: the projector onto the first k columns, independent of their phases."""
    if isinstance(v, np.ndarray):
        return v[..., :k] @ v[..., :k].conj().swapaxes(-1, -2)
    return v[..., :k] @ pk.conj(v[..., :k]).mT


def _thin(a):
    return np.linalg.svd(a, full_matrices=False)


# name -> (pykern function, numpy reference, input arrays)
CASES = {
    "inv": (lambda t: L.inv(t + 4.0 * _eye(3)), lambda a: np.linalg.inv(a + 4 * np.eye(3)),
            lambda: [_c(3, 3)]),
    "solve[matrix]": (lambda t, u: L.solve(t + 4.0 * _eye(3), u),
                      lambda a, b: np.linalg.solve(a + 4 * np.eye(3), b),
                      lambda: [_c(3, 3), _c(3, 2)]),
    "solve[vector]": (lambda t, u: L.solve(t + 4.0 * _eye(3), u),
                      lambda a, b: np.linalg.solve(a + 4 * np.eye(3), b),
                      lambda: [_c(3, 3), _c(3)]),
    "det": (L.det, np.linalg.det, lambda: [_c(2, 3, 3)]),
    "slogdet.logabsdet": (lambda t: L.slogdet(t).logabsdet, lambda a: np.linalg.slogdet(a)[1],
                          lambda: [_c(2, 3, 3)]),
    "slogdet.sign": (lambda t: L.slogdet(t).sign, lambda a: np.linalg.slogdet(a)[0],
                     lambda: [_c(2, 3, 3)]),
    "cholesky": (lambda t: L.cholesky(_herm(t)), lambda a: np.linalg.cholesky(_herm(a)),
                 lambda: [_c(2, 3, 3)]),
    "cholesky[upper]": (lambda t: L.cholesky(_herm(t), upper=True),
                        lambda a: np.linalg.cholesky(_herm(a)).conj().swapaxes(-1, -2),
                        lambda: [_c(3, 3)]),
    "qr[tall].Q": (lambda t: L.qr(t).Q, lambda a: np.linalg.qr(a)[0], lambda: [_c(4, 3)]),
    "qr[tall].R": (lambda t: L.qr(t).R, lambda a: np.linalg.qr(a)[1], lambda: [_c(2, 4, 3)]),
    "qr[wide]": (lambda t: pk.concat(list(L.qr(t)), axis=-1),
                 lambda a: np.concatenate(np.linalg.qr(a), axis=-1), lambda: [_c(3, 5)]),
    "eigvalsh": (lambda t: L.eigvalsh(_herm(t)), lambda a: np.linalg.eigvalsh(_herm(a)),
                 lambda: [_c(2, 3, 3)]),
    "eigh.eigenvalues": (lambda t: L.eigh(_herm(t)).eigenvalues,
                         lambda a: np.linalg.eigh(_herm(a))[0], lambda: [_c(3, 3)]),
    "eigh[|V|²]": (lambda t: pk.abs(L.eigh(_herm(t)).eigenvectors) ** 2,
                   lambda a: np.abs(np.linalg.eigh(_herm(a))[1]) ** 2, lambda: [_c(2, 3, 3)]),
    "eigh[projector]": (lambda t: _proj(L.eigh(_herm(t)).eigenvectors, 2),
                        lambda a: _proj(np.linalg.eigh(_herm(a))[1], 2), lambda: [_c(4, 4)]),
    "svdvals": (L.svdvals, lambda a: np.linalg.svd(a)[1], lambda: [_c(2, 4, 3)]),
    "svd[|U|²]": (lambda t: pk.abs(L.svd(t, full_matrices=False).U) ** 2,
                  lambda a: np.abs(_thin(a)[0]) ** 2, lambda: [_c(4, 3)]),
    "svd[|Vh|², wide]": (lambda t: pk.abs(L.svd(t, full_matrices=False).Vh) ** 2,
                         lambda a: np.abs(_thin(a)[2]) ** 2, lambda: [_c(3, 5)]),
    "svd[U Vh]": (lambda t: (lambda r: r.U @ r.Vh)(L.svd(t, full_matrices=False)),
                  lambda a: (lambda u, s, vh: u @ vh)(*_thin(a)), lambda: [_c(2, 4, 3)]),
    "svd[U S Vh, square full]": (
        lambda t: (lambda r: (r.U * r.S.reshape(r.S.shape[:-1] + (1, 3))) @ r.Vh)(L.svd(t)),
        lambda a: a.copy(), lambda: [_c(3, 3)]),
    "pinv[tall]": (L.pinv, np.linalg.pinv, lambda: [_c(4, 3)]),
    "pinv[wide]": (L.pinv, np.linalg.pinv, lambda: [_c(2, 3, 5)]),
    "matrix_norm[fro]": (L.matrix_norm, lambda a: np.linalg.norm(a, "fro"), lambda: [_c(3, 4)]),
    "matrix_norm[nuc]": (lambda t: L.matrix_norm(t, ord="nuc"),
                         lambda a: np.linalg.norm(a, "nuc"), lambda: [_c(3, 4)]),
    "matrix_norm[2]": (lambda t: L.matrix_norm(t, ord=2), lambda a: np.linalg.norm(a, 2),
                       lambda: [_c(3, 4)]),
    "matrix_norm[-2]": (lambda t: L.matrix_norm(t, ord=-2), lambda a: np.linalg.norm(a, -2),
                        lambda: [_c(4, 3)]),
    "matrix_norm[1]": (lambda t: L.matrix_norm(t, ord=1), lambda a: np.linalg.norm(a, 1),
                       lambda: [_c(3, 4)]),
    "matrix_norm[inf]": (lambda t: L.matrix_norm(t, ord=np.inf),
                         lambda a: np.linalg.norm(a, np.inf), lambda: [_c(3, 4)]),
    "vector_norm": (L.vector_norm, lambda a: np.linalg.norm(a.ravel()), lambda: [_c(3, 4)]),
    "vector_norm[3, axis]": (lambda t: L.vector_norm(t, ord=3, axis=1),
                             lambda a: np.linalg.norm(a, 3, axis=1), lambda: [_c(3, 4)]),
    "vector_norm[0.5]": (lambda t: L.vector_norm(t, ord=0.5, axis=0, keepdims=True),
                         lambda a: np.linalg.norm(a, 0.5, axis=0, keepdims=True),
                         lambda: [_c(3, 4)]),
    "vector_norm[1]": (lambda t: L.vector_norm(t, ord=1), lambda a: np.abs(a).sum(),
                       lambda: [_c(3, 4)]),
    "vector_norm[inf]": (lambda t: L.vector_norm(t, ord=np.inf), lambda a: np.abs(a).max(),
                         lambda: [_c(3, 4)]),
    "norm": (L.norm, lambda a: np.linalg.norm(a), lambda: [_c(3, 4)]),
    "norm[2]": (lambda t: L.norm(t, ord=2), lambda a: np.linalg.norm(a, 2), lambda: [_c(3, 4)]),
    "norm[axis pair]": (lambda t: L.norm(t, ord="nuc", axis=(0, 2)),
                        lambda a: np.linalg.norm(a, "nuc", axis=(0, 2)),
                        lambda: [_c(3, 2, 4)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_complex_linalg_gradient(name):
    fn, ref, arrays = CASES[name]
    check(fn, ref, *arrays(), atol=1e-5)


# ill-conditioned: singular values spread over 1e3 (inverses, determinants), eigenvalues and
# singular values 1e-2 apart (the gap terms F are 1e2 there)
ILL = {
    "inv": (L.inv, np.linalg.inv, lambda: [_conditioned(3, [1.0, 0.1, 1e-3])]),
    "solve": (L.solve, np.linalg.solve,
              lambda: [_conditioned(3, [1.0, 0.1, 1e-3]), _c(3, 2)]),
    "det": (L.det, np.linalg.det, lambda: [_conditioned(3, [10.0, 0.1, 1e-2])]),
    "slogdet.sign": (lambda t: L.slogdet(t).sign, lambda a: np.linalg.slogdet(a)[0],
                     lambda: [_conditioned(3, [1.0, 0.1, 1e-2])]),
    "cholesky": (lambda t: L.cholesky(t @ pk.conj(t).mT),
                 lambda a: np.linalg.cholesky(a @ a.conj().T),
                 lambda: [_conditioned(3, [1.0, 0.3, 0.05])]),
    "qr": (lambda t: L.qr(t).R, lambda a: np.linalg.qr(a)[1],
           lambda: [_conditioned(3, [1.0, 0.1, 1e-2])]),
    "eigh[close eigenvalues]": (
        lambda t: pk.abs(L.eigh(t @ pk.conj(t).mT).eigenvectors) ** 2,
        lambda a: np.abs(np.linalg.eigh(a @ a.conj().T)[1]) ** 2,
        lambda: [_conditioned(3, [1.0, 1.005, 2.0])]),
    "svd[close singular values]": (
        lambda t: pk.abs(L.svd(t, full_matrices=False).U) ** 2,
        lambda a: np.abs(_thin(a)[0]) ** 2, lambda: [_conditioned(3, [1.0, 1.01, 2.0])]),
    "pinv": (L.pinv, np.linalg.pinv, lambda: [_conditioned(3, [1.0, 0.1, 1e-2])]),
}


@pytest.mark.parametrize("name", sorted(ILL))
def test_complex_linalg_gradient_ill_conditioned(name):
    """Relative to the gradient's size (large here): numpy's central differences are
    accurate to about eps² · f''' / f'."""
    fn, ref, arrays = ILL[name]
    args = arrays()
    scale = float(np.abs(ref(*args)).max())
    check(fn, ref, *args, atol=1e-6 * max(scale, 1.0) ** 2)


SINGLE = ["inv", "solve[matrix]", "det", "slogdet.sign", "cholesky", "qr[tall].R",
          "eigh[|V|²]", "eigvalsh", "svd[U Vh]", "svdvals", "pinv[tall]", "matrix_norm[nuc]",
          "vector_norm[3, axis]"]


@pytest.mark.parametrize("name", SINGLE)
def test_complex64_gradients_match_complex128(name):
    """c64: the same loss's gradient as in c128, to single precision's loose tolerance."""
    fn, _, arrays = CASES[name]
    args = arrays()
    grads = []
    w = None
    for dtype in (pk.c128, pk.c64):
        ts = [pk.asarray(a).astype(dtype).requires_grad_() for a in args]
        out = fn(*ts)
        if w is None:
            w = RNG.standard_normal(out.shape)
            if out.dtype.is_complex:
                w = w + 1j * RNG.standard_normal(out.shape)
        out.backward(pk.asarray(w.astype(out.dtype.numpy)))
        assert all(t.grad.dtype == dtype for t in ts)
        grads.append([t.grad.numpy() for t in ts])
    for g128, g64 in zip(*grads):
        np.testing.assert_allclose(g64, g128, rtol=2e-3, atol=2e-3 * np.abs(g128).max())


def test_phase_dependent_losses_raise():
    """A loss of complex eigenvectors or singular vectors that changes with their phases (the
    decomposition fixes them by a convention, not by the matrix) has no gradient: a
    RuntimeError, as PyTorch's; a phase-invariant one of the same vectors differentiates."""
    a = pk.asarray(_c(3, 3)).requires_grad_()
    v = L.eigh(_herm(a)).eigenvectors
    with pytest.raises(RuntimeError, match="phases"):
        pk.sum(pk.real(v)).backward()
    r = L.svd(a, full_matrices=False)
    with pytest.raises(RuntimeError, match="phases"):
        pk.sum(pk.imag(r.U)).backward()
    r = L.svd(a, full_matrices=False)
    with pytest.raises(RuntimeError, match="phases"):  # U and Vh each moved, not together
        pk.sum(pk.real(r.U @ pk.conj(r.Vh))).backward()
    a.grad = None
    r = L.svd(a, full_matrices=False)
    pk.sum(pk.abs(r.U @ r.Vh) ** 2).backward()  # U D (D* Vh) = U Vh: invariant
    assert a.grad is not None and np.isfinite(a.grad.numpy()).all()


def test_real_matrix_with_complex_right_hand_side():
    """solve(A real, b complex): A gets the real part of its complex gradient, b all of it."""
    a = RNG.standard_normal((3, 3)) + 3 * np.eye(3)
    b = _c(3, 2)
    check(L.solve, np.linalg.solve, a, b, atol=1e-6)


def test_complex_factorizations_still_give_real_gradients_to_real_inputs():
    a = pk.asarray(RNG.standard_normal((3, 3))).requires_grad_()
    pk.sum(L.svdvals(a.astype(pk.c128) * (1 + 1j))).backward()
    assert a.grad.dtype == pk.f64
    np.testing.assert_allclose(a.grad.numpy(), np.sqrt(2) * (lambda u, s, vh: u @ vh)(
        *np.linalg.svd(a.numpy())), atol=1e-10)


@pytest.mark.parametrize("n", [0, 2, -2])
def test_complex_matrix_power(n):
    """n = 0: identities, a zero gradient; negative n through the complex inverse."""
    check(lambda t: L.matrix_power(t + 3.0 * _eye(3), n),
          lambda a: np.linalg.matrix_power(a + 3 * np.eye(3), n), _c(3, 3), atol=1e-5)


@pytest.mark.parametrize("fn", [lambda r: r.U @ r.Vh, lambda r: r.S], ids=["U Vh", "S"])
def test_complex_svd_of_an_empty_batch(fn):
    """A complex svd that requires grad packs U, S and Vh per matrix: an empty batch (0, n, n)
    has a zero gradient like a real one, not a ValueError from reshaping with an inferred size."""
    a = pk.zeros((0, 3, 3), dtype=pk.c128).requires_grad_()
    pk.sum(pk.real(fn(L.svd(a, full_matrices=False)))).backward()
    assert a.grad.shape == (0, 3, 3) and a.grad.dtype == pk.c128
    b = pk.zeros((0, 2, 2), dtype=pk.c64).requires_grad_()
    pk.sum(pk.abs(L.pinv(b))).backward()
    assert b.grad.shape == (0, 2, 2)


@pytest.mark.parametrize("dtype", [pk.c128, pk.c64])
def test_phase_dependence_is_checked_per_matrix_of_a_batch(dtype):
    """Each matrix's phase derivative is measured against its own gradient: against the whole
    batch's largest, a matrix whose loss depends only on the phases (real(U[1])) went through
    silently, with a meaningless gradient, next to one with a larger phase-invariant one."""
    a = pk.asarray(_c(2, 3, 3)).astype(dtype).requires_grad_()
    u = L.svd(a, full_matrices=False).U
    with pytest.raises(RuntimeError, match="phases"):
        (pk.sum(pk.abs(u[0]) ** 2 * 1e3) + pk.sum(pk.real(u[1]))).backward()
    v = L.eigh(_herm(a)).eigenvectors
    with pytest.raises(RuntimeError, match="phases"):
        (pk.sum(pk.abs(v[1]) ** 2 * 1e3) + pk.sum(pk.real(v[0]))).backward()
    assert a.grad is None
    w = pk.asarray(np.array([1e3, 1.0]).reshape(2, 1, 1))  # invariant in both: no error
    (pk.sum(pk.abs(L.eigh(_herm(a)).eigenvectors) ** 2 * w)
     + pk.sum(pk.abs(L.svd(a, full_matrices=False).U) ** 2 * w)).backward()
    assert np.isfinite(a.grad.numpy()).all()


@pytest.mark.parametrize("dtype", [pk.c128, pk.f64])
@pytest.mark.parametrize("norm", [
    lambda t: L.matrix_norm(t), lambda t: L.matrix_norm(t, ord=2),
    lambda t: L.matrix_norm(t, ord=1), lambda t: L.matrix_norm(t, ord=np.inf),
    lambda t: L.vector_norm(t, axis=(-2, -1)), lambda t: L.vector_norm(t, ord=3, axis=-1),
    lambda t: L.vector_norm(t, ord=-1, axis=-2)], ids=["fro", "2", "1", "inf", "v2", "v3", "v-1"])
def test_norms_of_empty_matrices_have_a_zero_gradient(norm, dtype):
    """The norms of empty vectors and matrices (0, or inf for negative ords) are made afresh, not
    from x: recorded with a zero gradient (PyTorch's), so that backward() runs instead of
    finding nothing that requires grad; so is a count of nonzeros over no axes."""
    for shape in [(2, 0, 3), (2, 3, 0), (0, 3, 3)]:
        t = pk.zeros(shape, dtype=dtype).requires_grad_()
        out = norm(t)
        pk.sum(pk.where(pk.isinf(out), 0.0, out)).backward()
        assert t.grad.shape == shape and t.grad.dtype == dtype
        assert not np.any(t.grad.numpy())
    t = pk.asarray(np.array([1.5, 0])).astype(dtype).requires_grad_()
    pk.sum(L.vector_norm(t, axis=(), ord=0)).backward()
    assert t.grad.dtype == dtype and not np.any(t.grad.numpy())
