"""pk.linalg's factorizations on complex input (c64, c128) against numpy.linalg: backward
errors over sizes on both sides of the panel width, batches and condition numbers; closeness to
numpy where the problem is well conditioned; numpy's conventions (complex sign of modulus 1 and
real logabsdet, real R diagonal, |re| + |im| pivots); the errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as pk
from linalg_matrices import BACKWARD_BOUND
from pykern.linalg.lu import lu_factor

BATCHES = st.sampled_from([(), (2,)])
DTYPES = st.sampled_from([np.complex64, np.complex128])
CONDS = st.sampled_from([1.0, 1e4])


def _unitary(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    z = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    return np.linalg.qr(z)[0]


def _conditioned(rng: np.random.Generator, batch: tuple[int, ...], n: int, cond: float,
                 dtype: type) -> np.ndarray:
    """Random complex U diag(s) Vᴴ, singular values from 1 to 1/cond."""
    s = np.logspace(0, -np.log10(cond), n) if n > 1 else np.ones(1)
    u, v = _unitary(rng, batch + (n, n)), _unitary(rng, batch + (n, n))
    return ((u * s[..., None, :]) @ _h(v)).astype(dtype)


def _hpd(rng: np.random.Generator, batch: tuple[int, ...], n: int, cond: float,
         dtype: type) -> np.ndarray:
    """Random Hermitian positive-definite matrices, eigenvalues from 1 to 1/cond."""
    s = np.logspace(0, -np.log10(cond), n) if n > 1 else np.ones(1)
    u = _unitary(rng, batch + (n, n))
    a = (u * s[..., None, :]) @ _h(u)
    return ((a + _h(a)) / 2).astype(dtype)


def _h(x: np.ndarray) -> np.ndarray:
    return np.conj(np.swapaxes(x, -1, -2))


def _norm(x: np.ndarray) -> np.ndarray:
    return np.sqrt((np.abs(x.astype(np.complex128)) ** 2).sum(axis=(-2, -1)))


def _ratio(residual: np.ndarray, scale: np.ndarray, n: int, dtype: type) -> float:
    """max over the batch of ‖residual‖ / (scale · n · ε), ε of the part dtype."""
    eps = float(np.finfo(np.dtype(dtype)).eps)
    return float(np.max(_norm(residual) / (np.maximum(scale, 1e-300) * max(n, 1) * eps),
                        initial=0.0))


def _c128(x: pk.Tensor) -> np.ndarray:
    return x.numpy().astype(np.complex128)


def _tol(dtype: type) -> float:
    return 1e-4 if dtype == np.complex64 else 1e-11


@settings(max_examples=4, deadline=None)
@given(n=st.integers(1, 36), batch=BATCHES, dtype=DTYPES, cond=CONDS, k=st.integers(1, 2),
       seed=st.integers(0, 2**16))
def test_complex_solve_and_inv_backward_error(n, batch, dtype, cond, k, seed):
    rng = np.random.default_rng(seed)
    a = _conditioned(rng, batch, n, cond, dtype)
    b = (rng.standard_normal(batch + (n, k)) + 1j * rng.standard_normal(batch + (n, k)))
    b = b.astype(dtype)
    x = pk.linalg.solve(pk.asarray(a), pk.asarray(b))
    assert x.shape == b.shape and x.dtype == pk.asarray(a).dtype
    xn, a128 = _c128(x), a.astype(np.complex128)
    assert _ratio(a128 @ xn - b, _norm(a128) * _norm(xn), n, dtype) < BACKWARD_BOUND
    inv = _c128(pk.linalg.inv(pk.asarray(a)))
    assert _ratio(a128 @ inv - np.eye(n), _norm(a128) * _norm(inv), n, dtype) < BACKWARD_BOUND
    if cond == 1.0:
        np.testing.assert_allclose(xn, np.linalg.solve(a128, b), rtol=_tol(dtype),
                                   atol=_tol(dtype))
        np.testing.assert_allclose(inv, np.linalg.inv(a128), rtol=_tol(dtype),
                                   atol=_tol(dtype))


@settings(max_examples=6, deadline=None)
@given(n=st.integers(1, 40), batch=BATCHES, dtype=DTYPES, cond=CONDS, upper=st.booleans(),
       seed=st.integers(0, 2**16))
def test_complex_cholesky_backward_error(n, batch, dtype, cond, upper, seed):
    a = _hpd(np.random.default_rng(seed), batch, n, cond, dtype)
    f = pk.linalg.cholesky(pk.asarray(a), upper=upper)
    assert f.dtype == pk.asarray(a).dtype
    lower = _h(_c128(f)) if upper else _c128(f)
    np.testing.assert_array_equal(np.triu(lower, 1), 0)
    assert np.all(np.diagonal(lower, axis1=-2, axis2=-1).imag == 0)
    a128 = a.astype(np.complex128)
    assert _ratio(lower @ _h(lower) - a128, _norm(a128), n, dtype) < BACKWARD_BOUND
    if cond == 1.0:
        np.testing.assert_allclose(lower, np.linalg.cholesky(a128), rtol=_tol(dtype),
                                   atol=_tol(dtype))


@settings(max_examples=4, deadline=None)
@given(m=st.integers(1, 36), n=st.integers(1, 36), batch=BATCHES, dtype=DTYPES,
       mode=st.sampled_from(["reduced", "complete"]), seed=st.integers(0, 2**16))
def test_complex_qr_is_unitary_and_matches_numpy(m, n, batch, dtype, mode, seed):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(batch + (m, n)) + 1j * rng.standard_normal(batch + (m, n)))
    a = a.astype(dtype)
    q, r = pk.linalg.qr(pk.asarray(a), mode=mode)
    q0, r0 = np.linalg.qr(a.astype(np.complex128), mode=mode)
    assert q.shape == q0.shape and r.shape == r0.shape and q.dtype == pk.asarray(a).dtype
    qn, rn = _c128(q), _c128(r)
    np.testing.assert_array_equal(np.tril(rn, -1), 0)
    assert np.all(np.diagonal(rn, axis1=-2, axis2=-1).imag == 0)  # numpy's: a real diagonal
    size = max(m, n)
    assert _ratio(qn @ rn - a, _norm(a), size, dtype) < BACKWARD_BOUND
    ident = np.eye(qn.shape[-1])
    assert _ratio(_h(qn) @ qn - ident, np.ones(()), size, dtype) < BACKWARD_BOUND
    # a random Gaussian matrix is well conditioned: the factors are numpy's
    np.testing.assert_allclose(qn, q0, rtol=1e-3 if dtype == np.complex64 else 1e-9,
                               atol=1e-3 if dtype == np.complex64 else 1e-9)


@settings(max_examples=6, deadline=None)
@given(n=st.integers(1, 40), batch=BATCHES, dtype=DTYPES, seed=st.integers(0, 2**16))
def test_complex_det_and_slogdet_match_numpy(n, batch, dtype, seed):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(batch + (n, n)) + 1j * rng.standard_normal(batch + (n, n)))
    a = (a / np.sqrt(n)).astype(dtype)
    a128 = a.astype(np.complex128)
    d = pk.linalg.det(pk.asarray(a))
    assert d.dtype == pk.asarray(a).dtype and d.shape == batch
    np.testing.assert_allclose(_c128(d), np.linalg.det(a128), rtol=1e-3 if dtype ==
                               np.complex64 else 1e-10)
    sign, logabs = pk.linalg.slogdet(pk.asarray(a))
    part = np.float32 if dtype == np.complex64 else np.float64
    assert sign.dtype == pk.asarray(a).dtype and logabs.dtype == part
    s0, l0 = np.linalg.slogdet(a128)
    np.testing.assert_allclose(np.abs(_c128(sign)), 1, rtol=_tol(dtype) * 10)
    np.testing.assert_allclose(_c128(sign), s0, rtol=1e-3, atol=_tol(dtype) * 10)
    np.testing.assert_allclose(logabs.numpy(), l0, rtol=1e-4, atol=_tol(dtype) * n)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128, np.float64])
def test_det_with_an_inf_entry_matches_numpy(dtype):
    inf = np.inf
    # a zero pivot: det 0 as numpy's (sign 0, logabsdet -inf), even where another pivot is
    # inf; the product of the pivots, inf · 0, gave nan
    singular = [[[inf, 0], [0, 0]], [[-1, 0], [inf, 1]], [[2, 0], [inf, 2]], [[0, -inf], [0, inf]]]
    if dtype != np.float64:
        singular.append([[2, 0], [complex(inf, 1), 2]])
    for c in singular:
        a = np.array(c, dtype)
        with np.errstate(all="ignore"):
            expected = np.linalg.det(a)
        assert expected == 0
        got = pk.linalg.det(pk.asarray(a))
        assert got.dtype == pk.asarray(a).dtype
        assert got.item() == 0, c
        sign, logabs = pk.linalg.slogdet(pk.asarray(a))
        assert sign.item() == 0 and logabs.item() == -inf
    # (the panel kernel: 40 x 40, an inf pivot and a zero one)
    big = np.eye(40, dtype=dtype)
    big[0, 0], big[5, 5] = inf, 0
    with np.errstate(all="ignore"):
        assert np.linalg.det(big) == 0
    assert pk.linalg.det(pk.asarray(big)).item() == 0
    # numpy's complex det is nan where an inf pivot's phase u / |u| is nan, and so is ours
    if dtype != np.float64:
        for c in ([[inf, 0], [0, 1]], [[1, 0], [0, inf]], [[inf, 1], [1, 1]],
                  [[complex(0, inf), 0], [0, 1]]):
            a = np.array(c, dtype)
            with np.errstate(all="ignore"):
                assert np.isnan(np.linalg.det(a))
            assert np.isnan(pk.linalg.det(pk.asarray(a)).item())
    else:  # a real inf pivot: ±inf, as numpy's
        for c in ([[inf, 0], [0, 1]], [[-inf, 0], [0, 2]], [[1, 2], [inf, 1]]):
            a = np.array(c, dtype)
            with np.errstate(all="ignore"):
                expected = np.linalg.det(a)
            assert pk.linalg.det(pk.asarray(a)).item() == expected


def test_pivots_are_lapacks_re_plus_im():
    # |3| > |2+2j|, but |re| + |im| is 3 < 4: LAPACK (numpy) takes row 1 as the pivot
    for dtype in (pk.c64, pk.c128):
        a = pk.asarray(np.array([[[3, 1], [2 + 2j, 5]]]), dtype)
        f = lu_factor(a)
        assert f.pivots.numpy().tolist() == [[1, 1]]


def test_real_and_complex_operands_promote_together():
    a = np.array([[3.0, 1.0], [1.0, 2.0]])
    b = np.array([1 + 1j, 2 - 1j], np.complex64)
    x = pk.linalg.solve(pk.asarray(a), pk.asarray(b))
    assert x.dtype == pk.c128  # f64 with c64, as numpy's complex128
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(a, b), rtol=1e-12)


def test_cholesky_reads_the_lower_triangle_and_real_diagonal_only():
    a = np.array([[4, 2 - 1j, 0], [2 + 1j, 5, 1j], [0, -1j, 3]], np.complex128)
    scribbled = np.tril(a) + np.triu(np.full((3, 3), 7 - 7j), 1) + np.diag([0.5j] * 3)
    got = pk.linalg.cholesky(pk.asarray(scribbled)).numpy()
    np.testing.assert_allclose(got, np.linalg.cholesky(a), rtol=1e-13)


def test_complex_errors_name_the_matrix_and_leave_the_input_intact():
    good = np.eye(2, dtype=np.complex64)
    singular = np.array([[1 + 1j, 2 + 2j], [1j, 2j]], np.complex64)  # row 0 = (1 + 1j) row 1 / i
    t = pk.asarray(np.stack([good, singular]))
    before = t.numpy()
    with pytest.raises(pk.linalg.LinAlgError, match=r"inv: x is singular \(matrix \(1,\)"):
        pk.linalg.inv(t)
    with pytest.raises(pk.linalg.LinAlgError, match=r"solve: x1 is singular \(matrix \(1,\)"):
        pk.linalg.solve(t, pk.asarray(np.ones((2, 2, 1), np.complex64)))
    s, la = pk.linalg.slogdet(t)
    assert s.numpy().tolist() == [1, 0] and la.numpy()[1] == -np.inf
    not_pd = pk.asarray(np.array([[1, 2j], [-2j, 1]], np.complex128))  # eigenvalues 3, -1
    with pytest.raises(pk.linalg.LinAlgError, match="cholesky: x is not positive definite"):
        pk.linalg.cholesky(not_pd)
    np.testing.assert_array_equal(t.numpy(), before)
