"""pk.linalg's factorizations (cholesky, qr, solve, inv, det, slogdet) against numpy.linalg:
backward errors on well- and ill-conditioned matrices, closeness to numpy where the problem is
well conditioned. Sizes cover both the one-workgroup path (n ≤ 32) and the blocked one."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as pk
from linalg_matrices import BACKWARD_BOUND, norm, ratio, spd, with_condition

BATCHES = st.sampled_from([(), (3,), (2, 1)])
DTYPES = st.sampled_from([np.float32, np.float64])
CONDS = st.sampled_from([1.0, 1e3, 1e6])


def _f64(x: pk.Tensor) -> np.ndarray:
    return x.numpy().astype(np.float64)


@settings(max_examples=9, deadline=None)
@given(n=st.integers(1, 40), batch=BATCHES, dtype=DTYPES, cond=CONDS, k=st.integers(1, 3),
       seed=st.integers(0, 2**16))
def test_solve_backward_error(n, batch, dtype, cond, k, seed):
    rng = np.random.default_rng(seed)
    a = with_condition(rng, batch, n, cond, dtype)
    b = rng.standard_normal(batch + (n, k)).astype(dtype)
    x = pk.linalg.solve(pk.asarray(a), pk.asarray(b))
    assert x.shape == b.shape and x.dtype == pk.asarray(a).dtype
    xn = _f64(x)
    a64 = a.astype(np.float64)
    assert ratio(a64 @ xn - b, norm(a64) * norm(xn), n, dtype) < BACKWARD_BOUND
    if cond == 1.0:
        tol = 1e-4 if dtype == np.float32 else 1e-11
        np.testing.assert_allclose(xn, np.linalg.solve(a64, b), rtol=tol, atol=tol)


@settings(max_examples=8, deadline=None)
@given(n=st.integers(1, 40), batch=BATCHES, dtype=DTYPES, cond=CONDS,
       seed=st.integers(0, 2**16))
def test_inv_backward_error(n, batch, dtype, cond, seed):
    a = with_condition(np.random.default_rng(seed), batch, n, cond, dtype)
    x = _f64(pk.linalg.inv(pk.asarray(a)))
    a64 = a.astype(np.float64)
    assert ratio(a64 @ x - np.eye(n), norm(a64) * norm(x), n, dtype) < BACKWARD_BOUND
    if cond == 1.0:
        tol = 1e-4 if dtype == np.float32 else 1e-11
        np.testing.assert_allclose(x, np.linalg.inv(a64), rtol=tol, atol=tol)


@settings(max_examples=10, deadline=None)
@given(n=st.integers(1, 40), batch=BATCHES, dtype=DTYPES, cond=CONDS, upper=st.booleans(),
       seed=st.integers(0, 2**16))
def test_cholesky_backward_error(n, batch, dtype, cond, upper, seed):
    a = spd(np.random.default_rng(seed), batch, n, cond, dtype)
    f = _f64(pk.linalg.cholesky(pk.asarray(a), upper=upper))
    lower = np.swapaxes(f, -1, -2) if upper else f
    assert np.array_equal(lower, np.tril(lower))  # exactly zero above the diagonal
    a64 = a.astype(np.float64)
    assert ratio(lower @ np.swapaxes(lower, -1, -2) - a64, norm(a64), n, dtype) < BACKWARD_BOUND
    if cond == 1.0:
        tol = 1e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(lower, np.linalg.cholesky(a64), rtol=tol, atol=tol)


@settings(max_examples=9, deadline=None)
@given(m=st.integers(1, 40), n=st.integers(1, 40), batch=BATCHES, dtype=DTYPES,
       mode=st.sampled_from(["reduced", "complete"]), seed=st.integers(0, 2**16))
def test_qr_backward_error_and_orthogonality(m, n, batch, dtype, mode, seed):
    a = np.random.default_rng(seed).standard_normal(batch + (m, n)).astype(dtype)
    q, r = pk.linalg.qr(pk.asarray(a), mode=mode)
    q2, r2 = np.linalg.qr(a.astype(np.float64), mode=mode)
    assert q.shape == q2.shape and r.shape == r2.shape
    qn, rn = _f64(q), _f64(r)
    assert np.array_equal(rn, np.triu(rn))
    size = max(m, n)
    a64 = a.astype(np.float64)
    assert ratio(qn @ rn - a64, norm(a64), size, dtype) < BACKWARD_BOUND
    qtq = np.swapaxes(qn, -1, -2) @ qn - np.eye(qn.shape[-1])
    assert ratio(qtq, np.ones(qtq.shape[:-2]), size, dtype) < BACKWARD_BOUND
    # numpy's signs (LAPACK's reflectors); random Gaussian matrices are well conditioned
    k = min(m, n)
    tol = 2e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(rn[..., :k, :], r2[..., :k, :], rtol=tol, atol=tol)
    np.testing.assert_allclose(qn[..., :, :k], q2[..., :, :k], rtol=tol, atol=tol)


@settings(max_examples=8, deadline=None)
@given(n=st.integers(1, 40), batch=BATCHES, dtype=DTYPES, seed=st.integers(0, 2**16))
def test_det_and_slogdet_match_numpy(n, batch, dtype, seed):
    a = np.random.default_rng(seed).standard_normal(batch + (n, n)).astype(dtype)
    a64 = a.astype(np.float64)
    sign, logabs = pk.linalg.slogdet(pk.asarray(a))
    s2, l2 = np.linalg.slogdet(a64)
    assert sign.shape == batch and logabs.shape == batch
    np.testing.assert_array_equal(_f64(sign), s2)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(_f64(logabs), l2, rtol=tol, atol=tol * n)
    d = _f64(pk.linalg.det(pk.asarray(a)))
    np.testing.assert_allclose(d, np.linalg.det(a64), rtol=tol * n, atol=0)


@pytest.mark.parametrize("n", [70])
def test_blocked_path_several_panels(n):
    """n = 70: three panels of the blocked LU, Cholesky and QR."""
    rng = np.random.default_rng(n)
    a = with_condition(rng, (2,), n, 1e4)
    b = rng.standard_normal((2, n, 3))
    x = _f64(pk.linalg.solve(pk.asarray(a), pk.asarray(b)))
    assert ratio(a @ x - b, norm(a) * norm(x), n, np.float64) < BACKWARD_BOUND
    s = spd(rng, (2,), n, 1e4)
    ell = _f64(pk.linalg.cholesky(pk.asarray(s)))
    assert ratio(ell @ np.swapaxes(ell, -1, -2) - s, norm(s), n, np.float64) < BACKWARD_BOUND
    q, r = (_f64(t) for t in pk.linalg.qr(pk.asarray(a[:, :, :50]), mode="complete"))
    assert ratio(q @ r - a[:, :, :50], norm(a[:, :, :50]), n, np.float64) < BACKWARD_BOUND
    np.testing.assert_allclose(_f64(pk.linalg.det(pk.asarray(a))), np.linalg.det(a),
                               rtol=1e-9)


def test_many_small_matrices_in_one_batch():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((600, 4, 4)) + 4 * np.eye(4)
    np.testing.assert_allclose(pk.linalg.inv(pk.asarray(a)).numpy(), np.linalg.inv(a),
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(pk.linalg.det(pk.asarray(a)).numpy(), np.linalg.det(a),
                               rtol=1e-10)


@pytest.mark.parametrize("dtype, scales", [(np.float64, (1e-200, 1e160, 1e300)),
                                           (np.float32, (1e-25, 1e25)),
                                           (np.complex64, (1e-25, 1e25))])
def test_qr_of_tiny_and_huge_matrices(dtype, scales):
    # each matrix is divided by a power of two near its largest magnitude: entries of 1e-200
    # (f32: 1e-25) gave a wrong Q and R (the column norms underflowed), of 1e160 nan
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 5, 4))
    q0, r0 = np.linalg.qr(x)
    tol = 1e-5 if dtype in (np.float32, np.complex64) else 1e-12
    for scale in scales:
        q, r = pk.linalg.qr(pk.asarray((x * scale).astype(dtype)))
        np.testing.assert_allclose(q.numpy(), q0, atol=tol)
        np.testing.assert_allclose(r.numpy() / scale, r0, atol=tol * 10)
    q, r = pk.linalg.qr(pk.asarray(x.astype(dtype)))  # a power of two: the same bits
    s, t = pk.linalg.qr(pk.asarray((x * 2.0**-90).astype(dtype)))
    assert np.array_equal(q.numpy(), s.numpy()) and np.array_equal(r.numpy(), t.numpy() * 2**90)


def test_lu_panel_gives_the_same_bits_with_any_workgroup_size():
    """The GPUs' unrolled panel kernel (sub-panels of 8 columns in registers, here 32
    invocations of 2 rows each) against the CPU devices' loops (sub-panels of 4, 64
    invocations): the same operations in the same order, so the same bits."""
    from pykern.linalg.lu_panel import factor_panel

    a = np.random.default_rng(3).standard_normal((2, 64, 64))
    got = []
    for shape in ((64, False), (32, True)):
        t = pk.asarray(a)
        pivots = pk.zeros((2, 64), pk.i32)
        info = pk.zeros((2,), pk.i32)
        factor_panel(t, pivots, info, 0, 24, shape=shape)
        got.append((t.numpy(), pivots.numpy()[:, :24]))
    for x, p in got[1:]:
        np.testing.assert_array_equal(got[0][0], x)
        np.testing.assert_array_equal(got[0][1], p)
