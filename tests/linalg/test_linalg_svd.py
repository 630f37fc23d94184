"""pk.linalg.svd, svdvals, pinv and matrix_rank against numpy.linalg: singular values
elementwise, ‖U S Vh − A‖, ‖UᵀU − I‖, ‖Vh Vhᵀ − I‖ relative to n·ε·‖A‖, over tall, wide and
square stacks, full and reduced, full-rank, rank-deficient and zero matrices.

Tolerances: singular values within 10·n·ε·‖A‖ (ε of the input dtype), residuals below
BACKWARD_BOUND·n·ε; pinv within 1e-10 (f64) of numpy on well-conditioned matrices."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as pk
from linalg_matrices import BACKWARD_BOUND, eps, norm, ratio

BATCHES = st.sampled_from([(), (3,), (2, 1)])
DTYPES = st.sampled_from([np.float32, np.float64])


def matrices(rng: np.random.Generator, batch: tuple[int, ...], m: int, n: int, rank: int,
             dtype: type) -> np.ndarray:
    """Random (batch..., m, n) matrices of the given rank (a product of two factors)."""
    return (rng.standard_normal(batch + (m, rank)) @ rng.standard_normal(batch + (rank, n))
            ).astype(dtype)


def check_svd(a: np.ndarray, res: pk.linalg.SVDResult, full: bool) -> None:
    m, n = a.shape[-2:]
    k = min(m, n)
    u, s, vh = (t.numpy().astype(np.float64) for t in res)
    assert res.S.shape == a.shape[:-2] + (k,)
    assert res.U.shape == a.shape[:-2] + (m, m if full else k)
    assert res.Vh.shape == a.shape[:-2] + (n if full else k, n)
    a64 = a.astype(np.float64)
    scale = norm(a64)
    tol = 10 * max(m, n) * eps(a.dtype) * scale[..., None] + 1e-300
    ref = np.linalg.svd(a64, compute_uv=False)
    assert np.all(np.abs(s - ref) <= tol), np.abs(s - ref).max()
    assert np.all(np.diff(s, axis=-1) <= 0)  # descending
    rebuilt = (u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :]
    assert ratio(rebuilt - a64, scale, max(m, n), a.dtype) < BACKWARD_BOUND
    for q in (u, np.swapaxes(vh, -1, -2)):
        eye = np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] + (q.shape[-1],) * 2)
        assert ratio(np.swapaxes(q, -1, -2) @ q - eye, np.ones(q.shape[:-2]), max(m, n),
                     a.dtype) < BACKWARD_BOUND


@settings(max_examples=15, deadline=None)
@given(m=st.integers(1, 7), n=st.integers(1, 7), batch=BATCHES, dtype=DTYPES,
       full=st.booleans(), deficient=st.booleans(), seed=st.integers(0, 2**16))
def test_svd_matches_numpy(m, n, batch, dtype, full, deficient, seed):
    rank = max(min(m, n) - 2, 0) if deficient else min(m, n)
    a = matrices(np.random.default_rng(seed), batch, m, n, rank, dtype)
    res = pk.linalg.svd(pk.asarray(a), full_matrices=full)
    check_svd(a, res, full)
    np.testing.assert_allclose(pk.linalg.svdvals(pk.asarray(a)).numpy(), res.S.numpy(),
                               atol=10 * max(m, n) * eps(dtype) * (1 + norm(a).max()))


@pytest.mark.parametrize("shape", [(36, 34), (34, 36)])
def test_svd_large_runs_the_global_path(shape):
    # 34 vectors of 36 f64 with their rotations exceed the shared-memory sweeps' 16 KiB
    a = matrices(np.random.default_rng(3), (), *shape, 30, np.float64)
    check_svd(a, pk.linalg.svd(pk.asarray(a)), True)


def test_svd_of_zero_matrices_completes_the_bases():
    a = np.zeros((2, 4, 3))
    res = pk.linalg.svd(pk.asarray(a))
    check_svd(a, res, True)
    np.testing.assert_array_equal(res.S.numpy(), 0)


def test_pinv_and_matrix_rank_match_numpy():
    rng = np.random.default_rng(4)
    a = matrices(rng, (3,), 5, 4, 4, np.float64)
    np.testing.assert_allclose(pk.linalg.pinv(pk.asarray(a)).numpy(), np.linalg.pinv(a),
                               atol=1e-10)
    deficient = matrices(rng, (2,), 6, 5, 3, np.float64)
    np.testing.assert_allclose(pk.linalg.pinv(pk.asarray(deficient)).numpy(),
                               np.linalg.pinv(deficient), atol=1e-9)
    rank = pk.linalg.matrix_rank(pk.asarray(deficient))
    assert rank.dtype == pk.i32
    np.testing.assert_array_equal(rank.numpy(), [3, 3])
    # a cut-off above every singular value but the largest
    s = np.linalg.svd(deficient, compute_uv=False)
    rtol = float((s[:, 1] / s[:, 0]).max()) * 1.01
    np.testing.assert_array_equal(pk.linalg.matrix_rank(pk.asarray(deficient), rtol=rtol)
                                  .numpy(), [1, 1])
    np.testing.assert_array_equal(
        pk.linalg.matrix_rank(pk.asarray(deficient), rtol=pk.asarray([0.0, rtol])).numpy(),
        [5, 1])


def test_matrix_rank_of_a_matrix_with_a_nan_raises_as_numpy():
    # numpy's SVD does not converge on a NaN (LinAlgError); NaN singular values made rank 0
    cases = [np.full((3, 3), np.nan), np.full((3, 3), np.nan, np.float32),
             np.array([[[1.0, 2.0], [3.0, 4.0]], [[1.0, np.nan], [0.0, 1.0]]]),
             np.array([[1.0, 0.0], [0.0, complex(1.0, np.nan)]])]
    for a in cases:
        with pytest.raises(np.linalg.LinAlgError, match="SVD did not converge"):
            np.linalg.matrix_rank(a)
        with pytest.raises(pk.linalg.LinAlgError, match="SVD did not converge: x has a NaN"):
            pk.linalg.matrix_rank(pk.asarray(a))
    with pytest.raises(pk.linalg.LinAlgError, match=r"matrix \(1,\) of the batch"):
        pk.linalg.matrix_rank(pk.asarray(cases[2]))
    # an inf without a NaN: NaN singular values and rank 0 in numpy too, no error
    for a in (np.array([[np.inf, 0.0], [0.0, 1.0]]), np.array([[-np.inf, 2.0], [3.0, 1.0]])):
        assert np.linalg.matrix_rank(a) == 0
        assert pk.linalg.matrix_rank(pk.asarray(a)).item() == 0
    np.testing.assert_array_equal(pk.linalg.matrix_rank(pk.asarray(cases[2][:1])).numpy(), [2])


def test_svd_dtypes_and_errors():
    a = np.array([[3, 0], [0, 4], [0, 0]], dtype=np.int64)
    res = pk.linalg.svd(pk.asarray(a), full_matrices=False)
    assert res.U is res[0] and res.S is res[1] and res.Vh is res[2]
    assert res.S.dtype == pk.f32
    np.testing.assert_allclose(res.S.numpy(), [4.0, 3.0])
    with pytest.raises(ValueError, match="linalg.svd: x must have at least 2 dimensions"):
        pk.linalg.svd(pk.zeros((3,)))
    with pytest.raises(ValueError, match="linalg.pinv: x must have"):
        pk.linalg.pinv(pk.zeros((3,)))
    assert pk.linalg.svdvals(pk.zeros((2, 0, 3))).shape == (2, 0)


def test_complex_values_and_rank():
    rng = np.random.default_rng(9)
    z = rng.standard_normal((2, 4, 3)) + 1j * rng.standard_normal((2, 4, 3))
    z[1, :, 2] = z[1, :, 0] * 1j  # rank 2
    s = pk.linalg.svdvals(pk.asarray(z))
    assert s.dtype == pk.f64
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(z, compute_uv=False), atol=1e-13)
    np.testing.assert_array_equal(pk.linalg.matrix_rank(pk.asarray(z)).numpy(), [3, 2])
    h = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    w = pk.linalg.eigvalsh(pk.asarray(h))  # the lower triangle, as numpy
    np.testing.assert_allclose(w.numpy(), np.linalg.eigvalsh(h), atol=1e-13)


def test_huge_and_non_finite_matrices():
    # each matrix is scaled by its largest magnitude first: 1e300-sized entries would overflow
    # the rotations' sums of squares; a matrix with an inf or nan gives nan, never leftovers
    big = np.array([[[1e300, 2e300], [3e300, 4e300]], [[1.0, 2.0], [3.0, 4.0]]])
    u, s, vh = pk.linalg.svd(pk.asarray(big))
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(big)[1], rtol=1e-12)
    np.testing.assert_allclose((u.numpy() * s.numpy()[:, None, :]) @ vh.numpy(), big,
                               rtol=1e-12, atol=0)
    bad = np.array([[[np.nan, 1.0], [2.0, 3.0]], [[1.0, 0.0], [0.0, 2.0]],
                    [[np.inf, 0.0], [0.0, 1.0]]])
    for dtype in (np.float32, np.float64):
        got = pk.linalg.svdvals(pk.asarray(bad.astype(dtype))).numpy()
        assert np.isnan(got[0]).all() and np.isnan(got[2]).all()
        np.testing.assert_allclose(got[1], [2.0, 1.0], rtol=1e-6)
        full = pk.linalg.svd(pk.asarray(bad.astype(dtype)))
        assert np.isnan(full.U.numpy()[0]).all() and np.isnan(full.Vh.numpy()[2]).all()
