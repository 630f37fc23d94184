"""pk.linalg's factorizations: the standard's broadcasting and result types, dtypes, and the
errors for singular, indefinite and misshapen input."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk


def test_solve_broadcasts_batches_and_takes_a_vector():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 1, 3, 3)) + 3 * np.eye(3)
    b = rng.standard_normal((4, 3, 2))
    x = pk.linalg.solve(pk.asarray(a), pk.asarray(b))
    assert x.shape == (2, 4, 3, 2)
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(a, b), rtol=1e-10, atol=1e-12)
    v = rng.standard_normal(3)
    xv = pk.linalg.solve(pk.asarray(a), pk.asarray(v))
    assert xv.shape == (2, 1, 3)
    np.testing.assert_allclose(xv.numpy(), np.linalg.solve(a, v[:, None])[..., 0], rtol=1e-10)


def test_named_tuples_and_namespace():
    a = pk.asarray([[3.0, 1.0], [4.0, 2.0]])
    res = pk.linalg.qr(a)
    assert isinstance(res, pk.linalg.QRResult) and res.Q is res[0] and res.R is res[1]
    sl = pk.linalg.slogdet(a)
    assert isinstance(sl, pk.linalg.SlogdetResult) and sl.sign is sl[0]
    assert sl.logabsdet.numpy() == pytest.approx(np.log(2.0), rel=1e-6)
    xp = a.__array_namespace__()
    assert xp.linalg.det(a).numpy() == pytest.approx(2.0, rel=1e-6)


def test_integer_input_gives_the_default_float_and_f16_stays_f16():
    d = pk.linalg.det(pk.asarray(np.array([[2, 1], [1, 3]], dtype=np.int32)))
    assert d.dtype == pk.f32 and d.numpy() == pytest.approx(5.0)
    h = pk.linalg.inv(pk.asarray(np.array([[2, 0], [0, 4]], dtype=np.float16)))
    assert h.dtype == pk.f16
    np.testing.assert_array_equal(h.numpy(), np.array([[0.5, 0], [0, 0.25]], np.float16))
    mixed = pk.linalg.solve(pk.asarray(np.eye(2, dtype=np.float32)),
                            pk.asarray(np.ones(2, np.float64)))
    assert mixed.dtype == pk.f64


def test_singular_matrices():
    a = np.stack([np.eye(3), [[1.0, 2, 3], [2, 4, 6], [1, 0, 1]]])
    t = pk.asarray(a)
    with pytest.raises(pk.linalg.LinAlgError, match=r"inv: x is singular \(matrix \(1,\)"):
        pk.linalg.inv(t)
    with pytest.raises(pk.linalg.LinAlgError, match=r"solve: x1 is singular"):
        pk.linalg.solve(t, pk.asarray(np.ones(3)))
    np.testing.assert_array_equal(t.numpy(), a)  # the input is intact
    assert issubclass(pk.linalg.LinAlgError, ValueError)
    np.testing.assert_array_equal(pk.linalg.det(t).numpy(), [1.0, 0.0])
    sign, logabs = pk.linalg.slogdet(t)
    np.testing.assert_array_equal(sign.numpy(), [1.0, 0.0])
    np.testing.assert_array_equal(logabs.numpy(), [0.0, -np.inf])
    np.testing.assert_allclose(pk.linalg.inv(pk.asarray(a[0])).numpy(), np.eye(3))


@pytest.mark.parametrize("n", [2, 40])  # the small-matrix kernel and the panel kernel
def test_a_nan_on_the_diagonal_gives_nan_as_numpy(n):
    # the pivot search skipped a NaN in row k (NaN > best is false): det([[nan, 0], [0, 1]])
    # gave -0.0 and solve raised "singular"; LAPACK's idamax keeps it, so numpy gives nan
    a = np.random.default_rng(3).standard_normal((n, n))
    a[0, 0] = np.nan
    a[1:, 0] = 0.0  # no other candidate: the zeros were taken as the pivot
    t = pk.asarray(a)
    assert np.isnan(pk.linalg.det(t).item()) and np.isnan(np.linalg.det(a))
    assert np.isnan(pk.linalg.slogdet(t).logabsdet.item())
    assert np.isnan(pk.linalg.solve(t, pk.asarray(np.ones(n))).numpy()).all()
    b = np.array([[0.0, 1.0], [np.nan, 0.0]])  # below row k it is skipped, as LAPACK does
    assert pk.linalg.det(pk.asarray(b)).item() == np.linalg.det(b) == 0.0


def test_cholesky_of_an_indefinite_matrix_names_it():
    a = np.stack([np.eye(2), np.eye(2), [[1.0, 2.0], [2.0, 1.0]]]).reshape(3, 1, 2, 2)
    with pytest.raises(pk.linalg.LinAlgError, match=r"not positive definite \(matrix \(2, 0\)"):
        pk.linalg.cholesky(pk.asarray(a))


@pytest.mark.parametrize("fn", [pk.linalg.cholesky, pk.linalg.inv, pk.linalg.det,
                                pk.linalg.slogdet])
def test_misshapen_input(fn):
    with pytest.raises(ValueError, match=r"square in its last two dimensions, got shape "
                                         r"\(2, 3\)"):
        fn(pk.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"at least 2 dimensions.*shape \(3,\)"):
        fn(pk.zeros((3,)))


def test_bad_solve_and_qr_arguments():
    with pytest.raises(ValueError, match=r"x2 must have shape \(2,\) or \(\.\.\., 2, k\)"):
        pk.linalg.solve(pk.zeros((2, 2)), pk.zeros((3,)))
    with pytest.raises(ValueError, match="cannot broadcast|broadcast"):
        pk.linalg.solve(pk.zeros((2, 2, 2)), pk.zeros((3, 2, 1)))
    with pytest.raises(ValueError, match="mode must be 'reduced' or 'complete', got 'r'"):
        pk.linalg.qr(pk.zeros((2, 2)), mode="r")
    with pytest.raises(TypeError, match="solve: x1 must be a pk.Tensor"):
        pk.linalg.solve("a", pk.zeros((2,)))


@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0), (0, 3, 3)])
def test_empty_matrices_and_batches(shape):
    z = np.zeros(shape)
    assert pk.linalg.inv(pk.asarray(z)).shape == shape
    np.testing.assert_array_equal(pk.linalg.det(pk.asarray(z)).numpy(), np.linalg.det(z))
    sign, logabs = pk.linalg.slogdet(pk.asarray(z))
    np.testing.assert_array_equal(logabs.numpy(), np.linalg.slogdet(z)[1])
    q, r = pk.linalg.qr(pk.asarray(z))
    assert q.shape == shape and r.shape == shape


def test_batch_beyond_one_launch_dimension():
    """70,000 matrices: more workgroups than a dispatch dimension takes (65,535)."""
    a = np.random.default_rng(2).standard_normal((70_000, 2, 2)) + 3 * np.eye(2)
    np.testing.assert_allclose(pk.linalg.inv(pk.asarray(a)).numpy(), np.linalg.inv(a),
                               rtol=1e-9, atol=1e-12)


def test_inputs_that_require_grad_are_recorded_outside_no_grad():
    """(The gradients themselves: test_linalg_grad.py.)"""
    a = pk.asarray(np.eye(2), dtype=pk.f64)
    a.requires_grad_()
    y = pk.linalg.inv(a)
    assert y.requires_grad
    np.testing.assert_array_equal(y.numpy(), np.eye(2))
    with pk.no_grad():
        y = pk.linalg.inv(a)
        assert not y.requires_grad
        np.testing.assert_array_equal(y.numpy(), np.eye(2))
