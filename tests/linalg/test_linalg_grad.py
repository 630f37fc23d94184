"""Autograd through pk.linalg: each function's gradient against central differences of numpy's
same function in float64, with a random weighting of every result (losses of eigenvectors and
singular vectors are sign-invariant, as only those have a gradient). Symmetric inputs (eigh,
cholesky) are parametrised as x + xᵀ, so the finite differences see symmetric perturbations.
Also: results of inputs that need no grad record nothing, and what has no gradient is refused
with an error that says why."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk

from gradcheck import numeric_grad

RNG = np.random.default_rng(11)
L = pk.linalg


def weights(*shapes):
    return [RNG.standard_normal(s) for s in shapes]


def check(pk_loss, np_loss, *arrays, atol=1e-6):
    """d pk_loss / d each array against central differences of np_loss."""
    ts = [pk.asarray(a).requires_grad_() for a in arrays]
    pk_loss(*ts).backward()
    for i, (t, a) in enumerate(zip(ts, arrays)):
        def f(x, i=i):
            args = list(arrays)
            args[i] = x
            return float(np_loss(*args))
        np.testing.assert_allclose(t.grad.numpy(), numeric_grad(f, a), atol=atol, rtol=1e-5)


def well_conditioned(*shape):
    n = shape[-1]
    return RNG.standard_normal(shape) + n * np.eye(n)


def wsum(w, t):
    """sum(w * t) for a pk tensor t and a numpy weight."""
    return pk.sum(pk.asarray(w) * t)


def test_inv_det_slogdet():
    a = well_conditioned(2, 3, 3)
    w, = weights((2, 3, 3))
    check(lambda x: wsum(w, L.inv(x)), lambda x: np.sum(w * np.linalg.inv(x)), a)
    v, = weights((2,))
    check(lambda x: wsum(v, L.det(x)), lambda x: np.sum(v * np.linalg.det(x)), a)
    check(lambda x: wsum(v, L.slogdet(x).logabsdet),
          lambda x: np.sum(v * np.linalg.slogdet(x)[1]), -a)


@pytest.mark.parametrize("a_shape, b_shape", [((2, 3, 3), (2, 3, 2)), ((3, 3), (3,)),
                                              ((2, 3, 3), (3,)), ((3, 3), (2, 3, 4))])
def test_solve_with_broadcasting_and_vectors(a_shape, b_shape):
    a, b = well_conditioned(*a_shape), RNG.standard_normal(b_shape)
    out_shape = np.linalg.solve(a, b).shape if len(b_shape) > 1 else a_shape[:-1]
    w, = weights(out_shape)

    def np_solve(x, y):
        if y.ndim == 1:  # the array API's one right-hand side, broadcast over x's batch
            return np.linalg.solve(x, y[..., None] * np.ones(x.shape[:-1] + (1,)))[..., 0]
        return np.linalg.solve(x, y)

    check(lambda x, y: wsum(w, L.solve(x, y)), lambda x, y: np.sum(w * np_solve(x, y)), a, b)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_of_a_symmetric_parametrisation(upper):
    x0 = RNG.standard_normal((2, 4, 4))
    w, = weights((2, 4, 4))

    def spd_pk(x):
        return pk.matmul(x, x.mT) + 4.0 * pk.eye(4, dtype=pk.f64)

    def chol_np(x):
        c = np.linalg.cholesky(x @ np.swapaxes(x, -1, -2) + 4 * np.eye(4))
        return np.swapaxes(c, -1, -2) if upper else c

    check(lambda x: wsum(w, L.cholesky(spd_pk(x), upper=upper)),
          lambda x: np.sum(w * chol_np(x)), x0)


def test_cholesky_gradient_is_symmetric():
    b = well_conditioned(4, 4)
    a = pk.asarray(b @ b.T).requires_grad_()
    w, = weights((4, 4))
    wsum(w, L.cholesky(a)).backward()
    g = a.grad.numpy()
    np.testing.assert_allclose(g, g.T, atol=1e-12)


@pytest.mark.parametrize("shape, mode", [((5, 3), "reduced"), ((3, 3), "reduced"),
                                         ((3, 5), "reduced"), ((3, 5), "complete"),
                                         ((2, 4, 3), "reduced")])
def test_qr(shape, mode):
    a = RNG.standard_normal(shape)
    q0, r0 = np.linalg.qr(a, mode=mode)
    wq, wr = weights(q0.shape, r0.shape)

    def np_loss(x):
        q, r = np.linalg.qr(x, mode=mode)
        return np.sum(wq * q) + np.sum(wr * r)

    check(lambda x: wsum(wq, L.qr(x, mode=mode).Q) + wsum(wr, L.qr(x, mode=mode).R), np_loss, a)


def test_eigh_and_eigvalsh():
    x0 = RNG.standard_normal((2, 4, 4))
    wl, wv = weights((2, 4), (2, 4, 4))

    def np_loss(x):
        lam, v = np.linalg.eigh(x + np.swapaxes(x, -1, -2))
        return np.sum(wl * lam) + np.sum(wv * v * v)

    def pk_loss(x):
        lam, v = L.eigh(x + x.mT)
        return wsum(wl, lam) + wsum(wv, v * v)

    check(pk_loss, np_loss, x0)
    check(lambda x: wsum(wl, L.eigvalsh(x + x.mT)),
          lambda x: np.sum(wl * np.linalg.eigvalsh(x + np.swapaxes(x, -1, -2))), x0)


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (3, 5), (2, 3, 4)])
def test_svd_and_svdvals(shape):
    a = RNG.standard_normal(shape)
    u0, s0, vh0 = np.linalg.svd(a, full_matrices=False)
    wu, ws, wv = weights(u0.shape, s0.shape, vh0.shape)

    def np_loss(x):
        u, s, vh = np.linalg.svd(x, full_matrices=False)
        return np.sum(wu * u * u) + np.sum(ws * s) + np.sum(wv * vh * vh)

    def pk_loss(x):
        u, s, vh = L.svd(x, full_matrices=False)
        return wsum(wu, u * u) + wsum(ws, s) + wsum(wv, vh * vh)

    check(pk_loss, np_loss, a)
    check(lambda x: wsum(ws, L.svdvals(x)), lambda x: np.sum(ws * np.linalg.svd(x)[1]), a)


def test_functions_built_on_the_decompositions():
    a = RNG.standard_normal((4, 3))
    w, = weights((3, 4))
    check(lambda x: wsum(w, L.pinv(x)), lambda x: np.sum(w * np.linalg.pinv(x)), a)
    for order in (2, -2, "nuc", "fro", 1, np.inf):
        check(lambda x, o=order: L.matrix_norm(x, ord=o),
              lambda x, o=order: np.linalg.norm(x, ord=o), a)
    sq = well_conditioned(3, 3)
    w3, = weights((3, 3))
    check(lambda x: wsum(w3, L.matrix_power(x, -2)),
          lambda x: np.sum(w3 * np.linalg.matrix_power(x, -2)), sq)
    check(lambda x: L.trace(x, offset=1), lambda x: np.trace(x, offset=1), a)
    wd, = weights((2,))
    check(lambda x: wsum(wd, L.diagonal(x, offset=-2)),
          lambda x: np.sum(wd * np.diagonal(x, offset=-2)), a)


def test_no_grad_records_nothing_and_the_undefined_cases_are_refused():
    a = pk.asarray(RNG.standard_normal((4, 3)))
    for result in (L.svd(a, full_matrices=False), L.qr(a), L.eigh(a.mT @ a)):
        assert not any(t.requires_grad for t in result)
    g = pk.asarray(RNG.standard_normal((4, 3))).requires_grad_()
    with pytest.raises(NotImplementedError, match="mode='reduced'"):
        L.qr(g, mode="complete")
    with pytest.raises(NotImplementedError, match="full_matrices=False"):
        L.svd(g)
    with pk.no_grad():  # and under no_grad they run
        assert L.svd(g).U.shape == (4, 4) and L.qr(g, mode="complete").Q.shape == (4, 4)
    assert L.svd(g, full_matrices=False).S.requires_grad  # the next call works
    sign, logabs = L.slogdet(pk.asarray(well_conditioned(3, 3)).requires_grad_())
    assert logabs.requires_grad and not sign.requires_grad


def test_float32_gradients_match_float64():
    a = well_conditioned(3, 3)
    grads = []
    for dtype in (np.float32, np.float64):
        t = pk.asarray(a.astype(dtype)).requires_grad_()
        (pk.sum(L.inv(t)) + pk.sum(L.eigvalsh(t + t.mT)) + pk.sum(L.svdvals(t))).backward()
        assert t.grad.dtype == (pk.f32 if dtype is np.float32 else pk.f64)
        grads.append(t.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("order", [2, 3, 0.5, -1.5])
def test_vector_norm_gradient_is_zero_at_zero_vectors_and_finite_at_zero_elements(order):
    # PyTorch's convention: a zero vector's norm has a zero gradient (the composition gave
    # nan), and a zero element of a p < 1 norm contributes 0, not a nan for every element
    x = np.array([[0.0, 0.0, 0.0], [1.0, -2.0, 2.0], [1.5, 0.0, -0.5]])
    t = pk.asarray(x).requires_grad_()
    pk.sum(L.vector_norm(t, ord=order, axis=-1)).backward()
    norms = np.linalg.norm(x, order, axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.sign(x) * np.abs(x / norms) ** (order - 1)
    want[(x == 0) | (norms == 0)] = 0
    np.testing.assert_allclose(t.grad.numpy(), want, atol=1e-12)
    check(lambda y: L.vector_norm(y, ord=order), lambda y: np.linalg.norm(y.ravel(), order),
          x[1:2])
    z = pk.zeros((2, 3), pk.f64).requires_grad_()
    L.matrix_norm(z).backward()  # "fro", through vector_norm
    assert np.array_equal(z.grad.numpy(), np.zeros((2, 3)))


def test_constant_results_have_zero_gradients():
    """vector_norm(ord=0) counts and matrix_power(x, 0) is the identity: a zero gradient that
    backward() reaches, as PyTorch's."""
    x = pk.asarray(RNG.standard_normal((3, 3))).requires_grad_()
    for out in (L.vector_norm(x, ord=0), L.matrix_power(x, 0)):
        assert out.requires_grad
        x.grad = None
        pk.sum(out).backward()
        np.testing.assert_array_equal(x.grad.numpy(), np.zeros((3, 3)))
    np.testing.assert_array_equal(L.matrix_power(x, 0).numpy(), np.eye(3))
    assert L.vector_norm(x, ord=0).item() == 9
