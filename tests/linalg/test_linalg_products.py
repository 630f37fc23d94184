"""The products and views of pk.linalg against numpy: cross, diagonal, trace, outer,
matrix_power (positive, zero and negative powers), and the re-exported matmul, tensordot,
vecdot and matrix_transpose under the extension's signatures; their errors."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk

RNG = np.random.default_rng(7)


def test_cross_broadcasts_and_takes_an_axis():
    a, b = RNG.standard_normal((2, 1, 3)), RNG.standard_normal((4, 3))
    np.testing.assert_allclose(pk.linalg.cross(pk.asarray(a), pk.asarray(b)).numpy(),
                               np.cross(a, b), rtol=1e-12)
    c, d = RNG.standard_normal((3, 5)), RNG.standard_normal((3, 5))
    np.testing.assert_allclose(pk.linalg.cross(pk.asarray(c), pk.asarray(d), axis=0).numpy(),
                               np.cross(c, d, axis=0), rtol=1e-12)
    with pytest.raises(ValueError, match="linalg.cross: axis -1 must have size 3"):
        pk.linalg.cross(pk.zeros((2,)), pk.zeros((2,)))


@pytest.mark.parametrize("offset", [0, 1, -2, 5])
def test_diagonal_and_trace(offset):
    x = RNG.standard_normal((2, 3, 4))
    want = np.diagonal(x, offset=offset, axis1=-2, axis2=-1)
    np.testing.assert_array_equal(pk.linalg.diagonal(pk.asarray(x), offset=offset).numpy(),
                                  want)
    np.testing.assert_allclose(pk.linalg.trace(pk.asarray(x), offset=offset).numpy(),
                               want.sum(-1), rtol=1e-12)


def test_trace_dtype_and_errors():
    x = pk.asarray(np.arange(9, dtype=np.int8).reshape(3, 3))
    assert pk.linalg.trace(x).dtype == pk.i32 and pk.linalg.trace(x).item() == 12
    assert pk.linalg.trace(x, dtype=pk.f64).dtype == pk.f64
    with pytest.raises(ValueError, match="linalg.diagonal: x must have at least 2"):
        pk.linalg.diagonal(pk.zeros((3,)))
    with pytest.raises(TypeError, match="linalg.diagonal: offset must be an int"):
        pk.linalg.diagonal(x, offset=1.5)


def test_outer():
    a, b = RNG.standard_normal(3), RNG.standard_normal(4)
    np.testing.assert_allclose(pk.linalg.outer(pk.asarray(a), pk.asarray(b)).numpy(),
                               np.outer(a, b), rtol=1e-15)
    with pytest.raises(ValueError, match="linalg.outer: x2 must be 1-d"):
        pk.linalg.outer(pk.zeros((3,)), pk.zeros((2, 2)))


@pytest.mark.parametrize("n", [0, 1, 2, 5, -1, -3])
def test_matrix_power(n):
    a = RNG.standard_normal((2, 4, 4)) + 4 * np.eye(4)
    np.testing.assert_allclose(pk.linalg.matrix_power(pk.asarray(a), n).numpy(),
                               np.linalg.matrix_power(a, n), rtol=1e-10, atol=1e-12)


def test_matrix_power_errors():
    with pytest.raises(ValueError, match="linalg.matrix_power: x must be a stack of square"):
        pk.linalg.matrix_power(pk.zeros((2, 3)), 2)
    with pytest.raises(TypeError, match="linalg.matrix_power: n must be an int"):
        pk.linalg.matrix_power(pk.zeros((2, 2)), 1.0)
    with pytest.raises(pk.linalg.LinAlgError, match="singular"):
        pk.linalg.matrix_power(pk.zeros((2, 2)), -1)


def test_reexported_products_follow_the_extension():
    a, b = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 4, 3))
    ta, tb = pk.asarray(a), pk.asarray(b)
    np.testing.assert_allclose(pk.linalg.matmul(ta, tb).numpy(), a @ b, rtol=1e-12)
    np.testing.assert_array_equal(pk.linalg.matrix_transpose(ta).numpy(),
                                  np.swapaxes(a, -1, -2))
    np.testing.assert_allclose(pk.linalg.tensordot(ta, tb, axes=([1, 2], [2, 1])).numpy(),
                               np.tensordot(a, b, axes=([1, 2], [2, 1])), rtol=1e-12)
    np.testing.assert_allclose(pk.linalg.vecdot(ta, ta, axis=-2).numpy(),
                               (a * a).sum(-2), rtol=1e-12)
    xp = ta.__array_namespace__()
    assert xp.linalg.svd is pk.linalg.svd and xp.linalg.vector_norm is pk.linalg.vector_norm
